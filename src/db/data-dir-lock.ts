import { linkSync, mkdirSync, readFileSync, unlinkSync, writeFileSync } from 'node:fs';
import path from 'node:path';

/**
 * PGlite does not stop two processes from opening one data directory (the second one's writes are
 * silently lost), so whoever opens it holds DATA_DIR/gatehouse.lock: the server for its lifetime, the
 * CLI for one command. A lock whose pid is dead is stale and may be taken over.
 */
export type LockRole = 'server' | 'cli';

export interface LockHolder {
  pid: number;
  role: LockRole;
}

export interface DataDirLock {
  readonly file: string;
  release(): void;
}

export const LOCK_FILE_NAME = 'gatehouse.lock';

export class DataDirLockedError extends Error {
  constructor(
    readonly holder: LockHolder,
    readonly file: string,
  ) {
    super(`${file} is held by a running Gatehouse ${holder.role === 'server' ? 'server' : 'command'} (pid ${holder.pid})`);
  }
}

export function lockFilePath(dataDir: string): string {
  return path.join(dataDir, LOCK_FILE_NAME);
}

export function isProcessAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === 'EPERM';
  }
}

function readHolder(file: string): LockHolder | null {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch {
    return null;
  }
  try {
    const parsed = JSON.parse(text) as Partial<LockHolder>;
    if (Number.isInteger(parsed.pid) && (parsed.role === 'server' || parsed.role === 'cli')) {
      return { pid: parsed.pid as number, role: parsed.role };
    }
  } catch {
    // unreadable content is treated like a dead holder
  }
  return { pid: 0, role: 'cli' };
}

/** The live process holding the data directory, if any. */
export function liveLockHolder(dataDir: string): LockHolder | null {
  const holder = readHolder(lockFilePath(dataDir));
  return holder && holder.pid > 0 && isProcessAlive(holder.pid) ? holder : null;
}

/** Takes the lock or throws DataDirLockedError naming the live holder. */
export function acquireDataDirLock(dataDir: string, role: LockRole): DataDirLock {
  mkdirSync(dataDir, { recursive: true });
  const file = lockFilePath(dataDir);
  const mine: LockHolder = { pid: process.pid, role };
  // Written whole to a private file, then linked into place: link fails when the lock exists, and a
  // reader never sees a half-written lock.
  const tmp = `${file}.${process.pid}.tmp`;
  writeFileSync(tmp, JSON.stringify(mine), { mode: 0o600 });
  try {
    for (let attempt = 0; ; attempt++) {
      try {
        linkSync(tmp, file);
        break;
      } catch (e) {
        if ((e as NodeJS.ErrnoException).code !== 'EEXIST' || attempt >= 3) throw e;
        const holder = readHolder(file);
        if (holder && holder.pid > 0 && holder.pid !== process.pid && isProcessAlive(holder.pid)) {
          throw new DataDirLockedError(holder, file);
        }
        try {
          unlinkSync(file);
        } catch {
          // someone else removed the stale lock first; try again
        }
      }
    }
  } finally {
    try {
      unlinkSync(tmp);
    } catch {
      // already gone
    }
  }

  let released = false;
  const release = (): void => {
    if (released) return;
    released = true;
    process.off('exit', release);
    if (readHolder(file)?.pid === process.pid) {
      try {
        unlinkSync(file);
      } catch {
        // already gone
      }
    }
  };
  // A crash between here and release() leaves a stale lock the next process takes over; a normal exit
  // without release() (an uncaught error) still cleans up.
  process.on('exit', release);
  return { file, release };
}
