import { spawnSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { afterEach, describe, expect, it } from 'vitest';
import { DataDirLockedError, acquireDataDirLock, liveLockHolder, lockFilePath } from '../../src/db/data-dir-lock.js';
import { tempDataDir } from '../helpers/processes.js';

/** The pid of a process that has already exited. */
function deadPid(): number {
  const child = spawnSync(process.execPath, ['-e', 'process.stdout.write(String(process.pid))']);
  return Number(child.stdout.toString());
}

describe('the data directory lock', () => {
  const dirs: Array<{ remove(): void }> = [];
  const dir = () => {
    const d = tempDataDir('gh-lock-');
    dirs.push(d);
    return d.dir;
  };
  afterEach(() => dirs.splice(0).forEach((d) => d.remove()));

  it('is taken once: a second taker learns who holds it', () => {
    const d = dir();
    const lock = acquireDataDirLock(d, 'server');
    expect(JSON.parse(readFileSync(lockFilePath(d), 'utf8'))).toEqual({ pid: process.pid, role: 'server' });
    expect(liveLockHolder(d)).toEqual({ pid: process.pid, role: 'server' });
    // A different live process holds it: pretend by rewriting the pid to our parent's.
    writeFileSync(lockFilePath(d), JSON.stringify({ pid: process.ppid, role: 'server' }));
    expect(() => acquireDataDirLock(d, 'cli')).toThrow(DataDirLockedError);
    writeFileSync(lockFilePath(d), JSON.stringify({ pid: process.pid, role: 'server' }));
    lock.release();
    expect(liveLockHolder(d)).toBeNull();
  });

  it('takes over a lock whose process is dead', () => {
    const d = dir();
    writeFileSync(lockFilePath(d), JSON.stringify({ pid: deadPid(), role: 'server' }));
    expect(liveLockHolder(d)).toBeNull();
    const lock = acquireDataDirLock(d, 'cli');
    expect(liveLockHolder(d)).toEqual({ pid: process.pid, role: 'cli' });
    lock.release();
  });

  it('takes over a lock file that is not readable as a lock', () => {
    const d = dir();
    writeFileSync(lockFilePath(d), 'garbage');
    const lock = acquireDataDirLock(d, 'server');
    expect(liveLockHolder(d)?.pid).toBe(process.pid);
    lock.release();
  });
});
