import { constants } from 'node:fs';
import { lstat, open, readdir, realpath, type FileHandle } from 'node:fs/promises';
import path from 'node:path';
import { notFound, transactionError } from '../http/errors.js';

/** Where backups live: DATA_DIR/backups. */
export function backupsDir(dataDir: string): string {
  return path.join(dataDir, 'backups');
}

export interface BackupFileEntry {
  /** Relative to the backups directory, '/'-separated: the value backups/fetch takes as `path`. */
  path: string;
  size_bytes: number;
  modified_time: Date;
}

const MAX_DEPTH = 4;
const MAX_ENTRIES = 10_000;

/**
 * Regular files under the backups directory, newest first. Symbolic links are not followed and not
 * listed (fetch would refuse one that leaves the directory); a dump still being written (.partial) is not
 * listed; a missing directory lists as empty.
 */
export async function listBackupFiles(dataDir: string): Promise<BackupFileEntry[]> {
  const root = backupsDir(dataDir);
  const out: BackupFileEntry[] = [];
  const walk = async (dir: string, rel: string, depth: number): Promise<void> => {
    let entries;
    try {
      entries = await readdir(dir, { withFileTypes: true });
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code === 'ENOENT' && depth === 0) return;
      throw e;
    }
    for (const entry of entries) {
      if (out.length >= MAX_ENTRIES) return;
      const relPath = rel === '' ? entry.name : `${rel}/${entry.name}`;
      const full = path.join(dir, entry.name);
      if (entry.isDirectory()) {
        if (depth + 1 < MAX_DEPTH) await walk(full, relPath, depth + 1);
      } else if (entry.isFile() && !entry.name.endsWith('.partial')) {
        // A file removed between readdir and lstat is simply not listed.
        const st = await lstat(full).catch(() => null);
        if (st?.isFile()) out.push({ path: relPath, size_bytes: st.size, modified_time: new Date(Math.floor(st.mtimeMs / 1000) * 1000) });
      }
    }
  };
  await walk(root, '', 0);
  return out.sort((a, b) => b.modified_time.getTime() - a.modified_time.getTime() || a.path.localeCompare(b.path));
}

export interface OpenedBackupFile {
  handle: FileHandle;
  /** Relative to the backups directory. */
  path: string;
  name: string;
  size_bytes: number;
}

function refuse(message: string): never {
  throw transactionError(message);
}

/**
 * Opens a backup named by a path relative to the backups directory. Refused (400 TransactionError): an
 * empty or repeated value, a NUL byte, an absolute path, a backslash, any '..' segment, and anything whose
 * real path (symbolic links resolved) is not inside the real backups directory or is not a regular file.
 * A missing file is 404 NotFound. The value is used exactly as the query parser decoded it, never decoded
 * again, so an encoded '..' stays a literal name.
 */
export async function openBackupFile(dataDir: string, requested: unknown): Promise<OpenedBackupFile> {
  if (typeof requested !== 'string' || requested === '') refuse('path is required: a file name from backups/list');
  if (requested.includes('\0')) refuse('path must not contain a NUL byte');
  if (path.isAbsolute(requested) || requested.includes('\\')) refuse('path must be relative to the backups directory');
  const segments = requested.split('/');
  if (segments.includes('..')) refuse("path must not contain '..'");

  let root: string;
  try {
    root = await realpath(backupsDir(dataDir));
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') throw notFound('No such backup file');
    throw e;
  }
  let real: string;
  try {
    real = await realpath(path.join(root, ...segments));
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    if (code === 'ENOENT' || code === 'ENOTDIR') throw notFound('No such backup file');
    throw e;
  }
  if (!real.startsWith(root + path.sep)) refuse('path must lie inside the backups directory');

  // O_NOFOLLOW: the checked real path cannot be swapped for a link between the check and the open;
  // O_NONBLOCK: a FIFO planted in the directory cannot hang the request (it is then refused as not a file).
  let handle: FileHandle;
  try {
    handle = await open(real, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK);
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    if (code === 'ENOENT') throw notFound('No such backup file');
    if (code === 'ELOOP') refuse('path must lie inside the backups directory');
    throw e;
  }
  const st = await handle.stat();
  if (!st.isFile()) {
    await handle.close();
    refuse('path must name a file, not a directory');
  }
  return { handle, path: path.relative(root, real).split(path.sep).join('/'), name: path.basename(real), size_bytes: st.size };
}
