import { readdir, stat, unlink } from 'node:fs/promises';
import { sideFilesOf } from './blobs.js';
import path from 'node:path';
import { syncDirectory } from './create.js';
import { backupsDir } from './paths.js';

/** Scheduled backups live in DATA_DIR/backups/scheduled; retention deletes only there, never an operator's own backups. */
export const SCHEDULED_FOLDER = 'scheduled';

export function scheduledBackupsDir(dataDir: string): string {
  return path.join(backupsDir(dataDir), SCHEDULED_FOLDER);
}

// gatehouse-20260301-120000.pgdump, gatehouse-20260301-120000-1.pglite.tar.gz: createBackup's names.
const BACKUP_NAME = /^gatehouse-(\d{4})(\d\d)(\d\d)-(\d\d)(\d\d)(\d\d)(?:-(\d+))?\.(?:pgdump|pglite\.tar\.gz)$/;

export interface ScheduledBackup {
  /** Relative to the backups directory, as backups/list and backups/fetch name it. */
  path: string;
  size_bytes: number;
  /** When it was taken (the time in its name). */
  time: Date;
}

/** The scheduled backups present, newest first (by the time in the name, then its -N suffix). */
export async function listScheduledBackups(dataDir: string): Promise<ScheduledBackup[]> {
  const dir = scheduledBackupsDir(dataDir);
  let names: string[];
  try {
    names = await readdir(dir);
  } catch (e) {
    // No folder yet (or something else in its place, which the next backup reports): nothing kept.
    const code = (e as NodeJS.ErrnoException).code;
    if (code === 'ENOENT' || code === 'ENOTDIR') return [];
    throw e;
  }
  const found: Array<ScheduledBackup & { seq: number }> = [];
  for (const name of names) {
    const m = BACKUP_NAME.exec(name);
    if (!m) continue;
    const st = await stat(path.join(dir, name)).catch(() => null);
    if (!st?.isFile()) continue;
    const time = new Date(Date.UTC(Number(m[1]), Number(m[2]) - 1, Number(m[3]), Number(m[4]), Number(m[5]), Number(m[6])));
    found.push({ path: `${SCHEDULED_FOLDER}/${name}`, size_bytes: st.size, time, seq: Number(m[7] ?? 0) });
  }
  found.sort((a, b) => b.time.getTime() - a.time.getTime() || b.seq - a.seq);
  return found.map(({ seq: _seq, ...backup }) => backup);
}

/** Deletes the scheduled backups beyond the newest `keep`; returns the deleted paths (relative to the backups directory). */
export async function pruneScheduledBackups(dataDir: string, keep: number): Promise<string[]> {
  const all = await listScheduledBackups(dataDir);
  const doomed = all.slice(Math.max(1, keep));
  for (const backup of doomed) {
    const file = path.join(backupsDir(dataDir), backup.path);
    // With its side files (Drive's blobs and the manifest).
    for (const f of [file, ...sideFilesOf(file)]) {
      await unlink(f).catch((e: NodeJS.ErrnoException) => {
        if (e.code !== 'ENOENT') throw e;
      });
    }
  }
  if (doomed.length > 0) await syncDirectory(scheduledBackupsDir(dataDir));
  return doomed.map((b) => b.path);
}
