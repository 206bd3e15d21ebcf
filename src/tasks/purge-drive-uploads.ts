import { readdir, stat } from 'node:fs/promises';
import path from 'node:path';
import type { Config } from '../config.js';
import { isPartName, partPath, removePart } from '../drive/uploads/parts.js';
import { deleteUpload, idleUploads, UPLOAD_IDLE_SECONDS } from '../drive/uploads/pending.js';
import { driveStorageFor } from '../drive/storage.js';
import type { TaskDefinition } from './scheduler.js';

const BATCH = 500;

/**
 * Uploads idle for 24 hours are abandoned: their rows and part files go. So do part files no row names
 * any more (a completion whose cleanup did not run) once they too are a day old.
 */
export function purgeDriveUploadsTask(config: Config): TaskDefinition {
  return {
    name: 'purge_drive_uploads',
    description: 'Delete Drive uploads idle for 24 hours, with their partial bytes',
    intervalSeconds: 3600,
    async run({ db, clock }) {
      const { uploadsDir, staging } = driveStorageFor(config);
      const cutoff = new Date(clock.nowMs() - UPLOAD_IDLE_SECONDS * 1000);
      let uploads = 0;
      for (;;) {
        const idle = await idleUploads(db, cutoff, BATCH);
        for (const u of idle) {
          await deleteUpload(db, u.id);
          await removePart(partPath(uploadsDir, u.partName));
          await staging?.remove(u.partName);
        }
        uploads += idle.length;
        if (idle.length < BATCH) break;
      }
      let strays = 0;
      const names = await readdir(uploadsDir).catch(() => [] as string[]);
      const parts = names.filter(isPartName);
      if (parts.length > 0) {
        const known = new Set(
          (await db.selectFrom('fup_file_uploads').select('fup_part_name').where('fup_part_name', 'in', parts).execute()).map((r) => r.fup_part_name),
        );
        for (const name of parts) {
          if (known.has(name)) continue;
          const file = path.join(uploadsDir, name);
          const info = await stat(file).catch(() => null);
          if (info && info.mtimeMs < cutoff.getTime()) {
            await removePart(file);
            strays++;
          }
        }
      }
      return { deleted_uploads: uploads, deleted_stray_parts: strays };
    },
  };
}
