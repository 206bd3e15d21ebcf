import { existsSync } from 'node:fs';
import type { Config } from '../config.js';
import { DataDirLockedError, acquireDataDirLock, liveLockHolder, type DataDirLock } from '../db/data-dir-lock.js';
import { openDatabase, type Database } from '../db/database.js';
import { describeDatabase, embeddedDatabaseDir, embeddedDatabaseExists } from '../db/location.js';
import { socketConnectionString, socketFilePath } from '../db/socket-server.js';
import { CliUsageError, type CliIo } from '../cli/context.js';

export type CliDatabaseRoute = 'postgres' | 'server-socket' | 'data-dir';

export interface CliDatabase {
  database: Database;
  route: CliDatabaseRoute;
  /** Which database this is, as the command tells the operator on stderr (a password masked). */
  description: string;
  close(): Promise<void>;
}

export interface CliDatabaseOptions {
  /** Whether the command may create a new embedded database in an empty DATA_DIR (only `migrate` does). */
  mayCreate?: boolean;
}

/**
 * DATA_DIR holds no embedded database and the command may not make one: most likely the command runs
 * from another directory than the server, and a new empty database there would hide the real one.
 */
export class NoDatabaseError extends CliUsageError {
  constructor(readonly dataDir: string) {
    super(
      `no database in ${dataDir} (looked for ${embeddedDatabaseDir(dataDir)}), and this command does not create one.\n` +
        `Point it at the server's database: DATA_DIR=/path/to/the/server/data npx gatehouse ... (the server's DATA_DIR, ` +
        `default ./data where it was started), or DATABASE_URL=postgres://... when the server uses PostgreSQL.\n` +
        `To create a new database on purpose, run \`npx gatehouse migrate\` or start the server.`,
    );
  }
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
 * server cannot start on it meanwhile. A data directory without a database is refused (NoDatabaseError)
 * before anything is written to it, unless the command may create one.
 */
export async function openCliDatabase(config: Config, io: CliIo, opts: CliDatabaseOptions = {}): Promise<CliDatabase> {
  if (config.databaseUrl) {
    const database = await openDatabase({ databaseUrl: config.databaseUrl, pgPoolMax: 2 });
    return { database, route: 'postgres', description: describeDatabase(config), close: () => database.close() };
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
          const description = `${describeDatabase(config)}, through the running server's socket ${socketFilePath(dataDir)} (server pid ${holder.pid})`;
          return { database, route: 'server-socket', description, close: () => database.close() };
        } catch (e) {
          if (Date.now() > deadline) throw e;
        }
      }
      waiting(`the server (pid ${holder.pid}) is starting, or another client is using its database socket`);
    } else {
      // Checked before the lock, which would create DATA_DIR and its lock file.
      if (!opts.mayCreate && !holder && !embeddedDatabaseExists(dataDir)) throw new NoDatabaseError(dataDir);
      try {
        const lock: DataDirLock = acquireDataDirLock(dataDir, 'cli');
        try {
          // Again under the lock: another command that held it may have failed before creating the database.
          if (!opts.mayCreate && !embeddedDatabaseExists(dataDir)) throw new NoDatabaseError(dataDir);
          const database = await openDatabase({ dataDir: embeddedDatabaseDir(dataDir) });
          return {
            database,
            route: 'data-dir',
            description: `${describeDatabase(config)}; no server is running on it`,
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
