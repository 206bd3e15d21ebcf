import type { Kysely } from 'kysely';
import type { Config } from '../config.js';
import type { Database } from '../db/database.js';
import type { DB } from '../db/types.js';
import type { Clock } from '../lib/clock.js';
import { requestServerBackup, type BackupFolder } from './channel.js';
import { backupSourceOf, createBackup, type BackupResult } from './create.js';
import type { BackupProgress } from './progress.js';

export interface BackupTaker {
  config: Pick<Config, 'dataDir' | 'databaseUrl' | 'blobStore'>;
  database: Database;
  clock: Clock;
}

/**
 * Takes a backup the way this process can: itself when it owns the database (PostgreSQL, which pg_dump
 * reaches on its own, or the embedded database open in this process), else, as a client of a running
 * server's embedded database, by asking that server over its backup socket.
 */
export function takeBackup(
  services: BackupTaker,
  folder: BackupFolder,
  progress: (p: BackupProgress) => void = () => {},
  connection?: Kysely<DB>,
): Promise<BackupResult> {
  if (services.config.databaseUrl || services.database.pglite) {
    return createBackup(backupSourceOf(services), services.config.dataDir, progress, { folder, ...(connection ? { connection } : {}) });
  }
  return requestServerBackup(services.config.dataDir, folder, progress);
}
