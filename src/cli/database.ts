import { existsSync } from 'node:fs';
import path from 'node:path';
import type { Config } from '../config.js';
import { DataDirLockedError, acquireDataDirLock, liveLockHolder } from '../db/data-dir-lock.js';
import { openDatabase, type Database } from '../db/database.js';
import { socketConnectionString, socketFilePath } from '../db/socket-server.js';
import type { CliIo } from './context.js';

export type CliDatabaseRoute = 'postgres' | 'server-socket' | 'data-dir';

export interface CliDatabase {
  database: Database;
  route: CliDatabaseRoute;
  close(): Promise<void>;
}

// A server still starting (opening and migrating the embedded database) opens its socket within seconds;
// another command holding the data directory finishes within seconds too.
const WAIT_MS = 30_000;
const POLL_MS = 100;

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

// A connect the server accepted but does not answer is given up and retried (within WAIT_MS), never
// waited on forever.
const CONNECT_TIMEOUT_MS = 10_000;

async function openThroughSocket(dataDir: string): Promise<Database> {
  return openDatabase({ databaseUrl: socketConnectionString(dataDir), pgPoolMax: 1, preparedStatements: false, connectTimeoutMs: CONNECT_TIMEOUT_MS });
}

/**
 * DATABASE_URL: PostgreSQL. Otherwise, while a server holds DATA_DIR, its Unix socket (PGlite must have
 * one owner); else the data directory itself, holding the lock for the command's duration so that a
 * server cannot start on it meanwhile.
 */
export async function openCliDatabase(config: Config, io: CliIo): Promise<CliDatabase> {
  if (config.databaseUrl) {
    const database = await openDatabase({ databaseUrl: config.databaseUrl, pgPoolMax: 2 });
    return { database, route: 'postgres', close: () => database.close() };
  }
  const { dataDir } = config;
  const deadline = Date.now() + WAIT_MS;
  let said = false;
  const waiting = (why: string) => {
    if (!said) io.stderr(`gatehouse: ${why}; waiting\n`);
    said = true;
  };
  for (;;) {
    const holder = liveLockHolder(dataDir);
    if (holder?.role === 'server') {
      if (existsSync(socketFilePath(dataDir))) {
        try {
          const database = await openThroughSocket(dataDir);
          return { database, route: 'server-socket', close: () => database.close() };
        } catch (e) {
          if (Date.now() > deadline) throw e;
        }
      }
      waiting(`the server (pid ${holder.pid}) is starting, or another client is using its database socket`);
    } else {
      try {
        const lock = acquireDataDirLock(dataDir, 'cli');
        try {
          const database = await openDatabase({ dataDir: path.join(dataDir, 'db') });
          return {
            database,
            route: 'data-dir',
            close: async () => {
              try {
                await database.close();
              } finally {
                lock.release();
              }
            },
          };
        } catch (e) {
          lock.release();
          throw e;
        }
      } catch (e) {
        if (!(e instanceof DataDirLockedError)) throw e;
        if (Date.now() > deadline) throw e;
        if (e.holder.role === 'cli') waiting(`another command (pid ${e.holder.pid}) is using ${dataDir}`);
      }
    }
    if (Date.now() > deadline) throw new Error(`timed out waiting for the database in ${dataDir}`);
    await sleep(POLL_MS);
  }
}
