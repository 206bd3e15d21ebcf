import { readdir, stat } from 'node:fs/promises';
import path from 'node:path';
import { partNameOf, partPath, removePart, sealedOutPath } from './parts.js';
import { deleteUpload, idleUploads, UPLOAD_IDLE_SECONDS } from './pending.js';
import type { DriveStorage } from '../storage.js';
import type { TaskDefinition } from '../../tasks/scheduler.js';

const BATCH = 500;

/**
 * Uploads idle for 24 hours are abandoned (refused completions too, once idle): their rows go with every
 * file they left, the part file, a completion's sealed copy (a crash mid-encryption) and the chunks
 * staged in a shared store. So do files and staged chunks no row names any more (a completion whose
 * cleanup did not run, a crash, an upload a vault rotation dropped) once they too are a day old.
 */
export function purgeDriveUploadsTask(storage: Pick<DriveStorage, 'uploadsDir' | 'staging'>): TaskDefinition {
  return {
    name: 'purge_drive_uploads',
    description: 'Delete Drive uploads idle for 24 hours, with their partial bytes',
    intervalSeconds: 3600,
    async run({ db, clock }) {
      const { uploadsDir, staging } = storage;
      const cutoff = new Date(clock.nowMs() - UPLOAD_IDLE_SECONDS * 1000);
      let uploads = 0;
      for (;;) {
        const idle = await idleUploads(db, cutoff, BATCH);
        for (const u of idle) {
          await deleteUpload(db, u.id);
          const part = partPath(uploadsDir, u.partName);
          await removePart(part);
          await removePart(sealedOutPath(part));
          await staging?.remove(u.partName);
        }
        uploads += idle.length;
        if (idle.length < BATCH) break;
      }
      const known = async (parts: string[]) =>
        parts.length === 0
          ? new Set<string>()
          : new Set((await db.selectFrom('fup_file_uploads').select('fup_part_name').where('fup_part_name', 'in', parts).execute()).map((r) => r.fup_part_name));
      let strays = 0;
      const names = await readdir(uploadsDir).catch(() => [] as string[]);
      const leftovers = names.flatMap((name) => {
        const part = partNameOf(name);
        return part ? [{ name, part }] : [];
      });
      const live = await known([...new Set(leftovers.map((l) => l.part))]);
      for (const { name, part } of leftovers) {
        if (live.has(part)) continue;
        const file = path.join(uploadsDir, name);
        const info = await stat(file).catch(() => null);
        if (info && info.mtimeMs < cutoff.getTime()) {
          await removePart(file);
          strays++;
        }
      }
      let strayStaged = 0;
      if (staging) {
        const stale = await staging.staleParts(cutoff);
        const stillLive = await known(stale);
        for (const part of stale) {
          if (stillLive.has(part)) continue;
          await staging.remove(part);
          strayStaged++;
        }
      }
      return { deleted_uploads: uploads, deleted_stray_parts: strays, deleted_stray_staged: strayStaged };
    },
  };
}
