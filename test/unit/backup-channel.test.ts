import { mkdtempSync, rmSync, statSync } from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BackupChannelError, backupSocketPath, requestServerBackup, startBackupChannel, type BackupChannel, type BackupFolder } from '../../src/backups/channel.js';
import type { BackupProgress } from '../../src/backups/progress.js';
import { acquireDataDirLock, type DataDirLock } from '../../src/db/data-dir-lock.js';

/** One raw exchange on the socket: what the server answers to `line`, as parsed JSON lines. */
function exchange(file: string, line: string): Promise<unknown[]> {
  return new Promise((resolve, reject) => {
    const socket = net.createConnection(file, () => socket.write(line));
    let text = '';
    socket.on('data', (d: Buffer) => (text += d.toString()));
    socket.on('error', reject);
    socket.on('close', () => resolve(text.split('\n').filter(Boolean).map((l) => JSON.parse(l) as unknown)));
  });
}

describe('the server backup channel (DATA_DIR/gatehouse-backup.sock)', () => {
  let dir: string;
  let lock: DataDirLock;
  let channel: BackupChannel;
  const asked: BackupFolder[] = [];

  beforeAll(async () => {
    dir = mkdtempSync(path.join(os.tmpdir(), 'gh-channel-'));
    // The server holds the data directory while its channel is open.
    lock = acquireDataDirLock(dir, 'server');
    channel = await startBackupChannel(dir, async (folder, progress) => {
      asked.push(folder);
      if (folder === 'scheduled') throw new Error('disk full');
      progress({ kind: 'note', text: 'dumping' });
      progress({ kind: 'step', fraction: 1, label: 'done' });
      return { path: path.join(dir, 'backups', 'gatehouse-x.pglite.tar.gz'), size_bytes: 42 };
    });
  });
  afterAll(async () => {
    await channel.stop();
    lock.release();
    rmSync(dir, { recursive: true, force: true });
  });

  it('is a socket only its owner may open', () => {
    expect(channel.path).toBe(backupSocketPath(dir));
    expect(statSync(channel.path).mode & 0o777).toBe(0o600);
  });

  it('relays the progress and the result to the command', async () => {
    const progress: BackupProgress[] = [];
    const result = await requestServerBackup(dir, '', (p) => progress.push(p));
    expect(result).toEqual({ path: path.join(dir, 'backups', 'gatehouse-x.pglite.tar.gz'), size_bytes: 42 });
    expect(progress).toEqual([{ kind: 'note', text: 'dumping' }, { kind: 'step', fraction: 1, label: 'done' }]);
  });

  it("reports the server's failure as the command's error", async () => {
    await expect(requestServerBackup(dir, 'scheduled', () => {})).rejects.toThrow('disk full');
  });

  it('answers a bad request with an error and takes no backup', async () => {
    const before = asked.length;
    expect(await exchange(channel.path, 'not json\n')).toEqual([{ error: 'the request is not JSON' }]);
    expect(await exchange(channel.path, '{"backup": "drop"}\n')).toEqual([{ error: 'the request must be {"backup": "create"}' }]);
    expect(await exchange(channel.path, '{"backup": "create", "folder": "../../etc"}\n')).toEqual([{ error: 'folder must be one of: "", "scheduled"' }]);
    expect(await exchange(channel.path, `${'x'.repeat(2000)}`)).toEqual([{ error: 'request too long' }]);
    expect(asked.length).toBe(before);
  });

  it('a command finding no server says so', async () => {
    const other = mkdtempSync(path.join(os.tmpdir(), 'gh-channel-none-'));
    try {
      await expect(requestServerBackup(other, '', () => {})).rejects.toThrow(BackupChannelError);
      await expect(requestServerBackup(other, '', () => {})).rejects.toThrow(`no server is running on ${other}`);
    } finally {
      rmSync(other, { recursive: true, force: true });
    }
  });
});
