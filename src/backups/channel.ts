import { chmodSync, existsSync, unlinkSync } from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { liveLockHolder } from '../db/data-dir-lock.js';
import type { BackupResult } from './create.js';
import type { BackupProgress } from './progress.js';

/**
 * While a server owns the embedded database, no other process may open it, and a dump through its
 * PostgreSQL socket would share the server's one session (and Debian's pg_dump refuses PGlite's newer
 * PostgreSQL anyway). So the server takes the backup itself, asked over this Unix socket in DATA_DIR
 * (mode 0600: its owner only, like the data directory). One request per connection, newline-delimited
 * JSON: the client sends {"backup": "create", "folder": "" | "scheduled"}; the server answers with
 * {"progress": ...} lines and one {"result": {path, size_bytes}} or {"error": "..."}, then closes.
 */
export const BACKUP_SOCKET_NAME = 'gatehouse-backup.sock';

/** The folders under DATA_DIR/backups a backup may be asked into. */
export const BACKUP_FOLDERS = ['', 'scheduled'] as const;
export type BackupFolder = (typeof BACKUP_FOLDERS)[number];

const MAX_REQUEST_BYTES = 1024;
// A client that connects and says nothing is dropped.
const REQUEST_TIMEOUT_MS = 10_000;
const MAX_SOCKET_PATH = 100;

export function backupSocketPath(dataDir: string): string {
  return path.join(dataDir, BACKUP_SOCKET_NAME);
}

export type TakeBackup = (folder: BackupFolder, progress: (p: BackupProgress) => void) => Promise<BackupResult>;

export interface BackupChannel {
  readonly path: string;
  /** Stops accepting and waits for backups in progress to finish. */
  stop(): Promise<void>;
}

function parseRequest(line: string): BackupFolder {
  let request: unknown;
  try {
    request = JSON.parse(line);
  } catch {
    throw new Error('the request is not JSON');
  }
  const { backup, folder = '' } = (typeof request === 'object' && request !== null ? request : {}) as Record<string, unknown>;
  if (backup !== 'create') throw new Error("the request must be {\"backup\": \"create\"}");
  const known = BACKUP_FOLDERS.find((f) => f === folder);
  if (known === undefined) throw new Error(`folder must be one of: ${BACKUP_FOLDERS.map((f) => JSON.stringify(f)).join(', ')}`);
  return known;
}

/** Serves backup requests on DATA_DIR/gatehouse-backup.sock; `take` runs in the server, which owns the database. */
export async function startBackupChannel(dataDir: string, take: TakeBackup): Promise<BackupChannel> {
  const file = backupSocketPath(dataDir);
  if (file.length > MAX_SOCKET_PATH) {
    throw new Error(`DATA_DIR is too long for a Unix socket path (${file.length} > ${MAX_SOCKET_PATH} bytes): ${file}`);
  }
  // Left behind by a server that crashed; the caller holds the data directory lock, so it is not in use.
  if (existsSync(file)) unlinkSync(file);
  const inFlight = new Set<Promise<unknown>>();
  const sockets = new Set<net.Socket>();

  const server = net.createServer((socket) => {
    sockets.add(socket);
    socket.once('close', () => sockets.delete(socket));
    socket.on('error', () => {});
    socket.setTimeout(REQUEST_TIMEOUT_MS, () => socket.destroy());
    const send = (message: unknown) => {
      if (!socket.destroyed) socket.write(`${JSON.stringify(message)}\n`);
    };
    let buffered = '';
    const onData = (chunk: Buffer) => {
      buffered += chunk.toString('utf8');
      const end = buffered.indexOf('\n');
      if (end < 0) {
        if (buffered.length > MAX_REQUEST_BYTES) socket.end(`${JSON.stringify({ error: 'request too long' })}\n`);
        return;
      }
      socket.off('data', onData);
      socket.setTimeout(0);
      let folder: BackupFolder;
      try {
        folder = parseRequest(buffered.slice(0, end));
      } catch (e) {
        socket.end(`${JSON.stringify({ error: (e as Error).message })}\n`);
        return;
      }
      // The backup finishes even when the client goes away: its file is complete or not there at all.
      const run = take(folder, (progress) => send({ progress }))
        .then((result) => send({ result }))
        .catch((e: unknown) => send({ error: e instanceof Error ? e.message : String(e) }))
        .finally(() => {
          socket.end();
          inFlight.delete(run);
        });
      inFlight.add(run);
    };
    socket.on('data', onData);
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(file, () => {
      server.off('error', reject);
      resolve();
    });
  });
  chmodSync(file, 0o600);

  return {
    path: file,
    async stop() {
      await new Promise<void>((resolve) => server.close(() => resolve()));
      await Promise.allSettled([...inFlight]);
      for (const socket of sockets) socket.destroy();
      try {
        unlinkSync(file);
      } catch {
        // net.Server removes it on close
      }
    },
  };
}

/** The server could not be asked (no socket, refused); the message says what to do. */
export class BackupChannelError extends Error {}

const WAIT_MS = 30_000;
const POLL_MS = 100;

function requestOnce(file: string, folder: BackupFolder, onProgress: (p: BackupProgress) => void): Promise<BackupResult> {
  return new Promise((resolve, reject) => {
    const socket = net.createConnection(file);
    let buffered = '';
    let settled = false;
    const settle = (fn: () => void) => {
      if (settled) return;
      settled = true;
      fn();
    };
    socket.once('connect', () => socket.write(`${JSON.stringify({ backup: 'create', folder })}\n`));
    socket.on('data', (chunk: Buffer) => {
      buffered += chunk.toString('utf8');
      let end: number;
      while ((end = buffered.indexOf('\n')) >= 0) {
        const line = buffered.slice(0, end);
        buffered = buffered.slice(end + 1);
        let message: { progress?: BackupProgress; result?: BackupResult; error?: string };
        try {
          message = JSON.parse(line) as typeof message;
        } catch {
          settle(() => reject(new Error(`the server answered something other than JSON: ${line.slice(0, 200)}`)));
          socket.destroy();
          return;
        }
        if (message.progress) onProgress(message.progress);
        else if (message.result) settle(() => resolve(message.result!));
        else if (message.error !== undefined) settle(() => reject(new Error(message.error)));
      }
    });
    socket.once('error', (e) => settle(() => reject(e)));
    socket.once('close', () => settle(() => reject(new Error('the server closed its backup socket before the backup finished'))));
  });
}

/**
 * Asks the server running on dataDir to take a backup, relaying its progress. A server still starting
 * opens its socket within seconds: the socket is waited for (30 s) while the server holds the lock.
 */
export async function requestServerBackup(dataDir: string, folder: BackupFolder, onProgress: (p: BackupProgress) => void): Promise<BackupResult> {
  const file = backupSocketPath(dataDir);
  const deadline = Date.now() + WAIT_MS;
  for (;;) {
    const holder = liveLockHolder(dataDir);
    if (holder?.role !== 'server') throw new BackupChannelError(`no server is running on ${dataDir}`);
    try {
      return await requestOnce(file, folder, onProgress);
    } catch (e) {
      const code = (e as NodeJS.ErrnoException).code;
      if (code !== 'ENOENT' && code !== 'ECONNREFUSED') throw e;
      if (Date.now() > deadline) {
        throw new BackupChannelError(`the server (pid ${holder.pid}) does not answer on ${file}; a server older than this command cannot take backups while it runs: stop it and run the command again`);
      }
    }
    await new Promise((r) => setTimeout(r, POLL_MS));
  }
}
