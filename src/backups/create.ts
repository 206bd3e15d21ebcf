import { spawn } from 'node:child_process';
import { chmod, mkdir, rename, rm, stat, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { sql } from 'kysely';
import type { Database } from '../db/database.js';
import { systemClock, type Clock } from '../lib/clock.js';
import { backupsDir } from './paths.js';

export interface BackupSource {
  database: Database;
  /** The PostgreSQL connection string pg_dump connects with; needed when database.kind is 'postgres'. */
  databaseUrl?: string;
  clock?: Clock;
}

export interface BackupResult {
  path: string;
  size_bytes: number;
}

export class BackupError extends Error {}

/** The services a running process has, as a backup source. */
export function backupSourceOf(services: { database: Database; config: { databaseUrl: string | undefined }; clock: Clock }): BackupSource {
  return { database: services.database, databaseUrl: services.config.databaseUrl, clock: services.clock };
}

function stamp(d: Date): string {
  return d.toISOString().slice(0, 19).replace(/[-:]/g, '').replace('T', '-');
}

async function uniqueName(dir: string, base: string, ext: string): Promise<string> {
  for (let n = 0; ; n++) {
    const candidate = path.join(dir, n === 0 ? `${base}${ext}` : `${base}-${n}${ext}`);
    const exists = await stat(candidate).then(() => true, () => false);
    if (!exists) return candidate;
  }
}

/**
 * The embedded database's data directory as a gzipped tar (PGlite dumpDataDir), taken while holding the
 * database's one connection, so no transaction of this process is half-done, after a CHECKPOINT. It loads
 * back with PGlite's loadDataDir.
 */
async function dumpPGlite(database: Database, target: string): Promise<void> {
  const pglite = database.pglite;
  if (!pglite) throw new BackupError('the embedded database is not open in this process');
  const archive = await database.db.connection().execute(async (conn) => {
    await sql`checkpoint`.execute(conn);
    return pglite.dumpDataDir('gzip');
  });
  await writeFile(target, Buffer.from(await archive.arrayBuffer()), { mode: 0o600 });
}

/**
 * pg_dump in its custom format (restore with pg_restore). pg_dump takes one snapshot, so the dump is
 * consistent. The password travels in PGPASSWORD, never on the command line.
 */
async function dumpPostgres(databaseUrl: string, target: string): Promise<void> {
  const env = { ...process.env };
  let dbname = databaseUrl;
  // A Unix-socket URI (postgres://user@/db?host=/dir) has no host part for WHATWG URL, but libpq reads it.
  if (URL.canParse(databaseUrl)) {
    const url = new URL(databaseUrl);
    if (url.password) env.PGPASSWORD = decodeURIComponent(url.password);
    url.password = '';
    dbname = url.toString();
  }
  await new Promise<void>((resolve, reject) => {
    const child = spawn('pg_dump', ['--format=custom', '--no-password', `--file=${target}`, `--dbname=${dbname}`], {
      env,
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    let stderr = '';
    child.stderr.on('data', (chunk: Buffer) => {
      stderr = (stderr + chunk.toString('utf8')).slice(-4000);
    });
    child.on('error', (e: NodeJS.ErrnoException) =>
      reject(new BackupError(e.code === 'ENOENT' ? 'pg_dump is not installed (PATH); install the PostgreSQL client tools' : `pg_dump could not start: ${e.message}`)),
    );
    child.on('close', (code) => (code === 0 ? resolve() : reject(new BackupError(`pg_dump failed (exit ${code}): ${stderr.trim()}`))));
  });
  await chmod(target, 0o600);
}

/**
 * Writes a consistent dump of the database into DATA_DIR/backups and returns its path and size. The file
 * appears under its final name only once complete (written as .partial, then renamed). Progress lines go
 * to `progress` (the CLI sends them to stderr).
 */
export async function createBackup(source: BackupSource, dataDir: string, progress: (line: string) => void = () => {}): Promise<BackupResult> {
  const dir = backupsDir(dataDir);
  await mkdir(dir, { recursive: true, mode: 0o700 });
  const when = stamp((source.clock ?? systemClock).now());
  const kind = source.database.kind;
  const ext = kind === 'pglite' ? '.pglite.tar.gz' : '.pgdump';
  const final = await uniqueName(dir, `gatehouse-${when}`, ext);
  const partial = `${final}.partial`;
  progress(`backup: dumping the ${kind === 'pglite' ? 'embedded' : 'PostgreSQL'} database to ${final}`);
  const started = performance.now();
  try {
    if (kind === 'pglite') {
      await dumpPGlite(source.database, partial);
    } else {
      if (!source.databaseUrl) throw new BackupError('no database URL to dump from');
      await dumpPostgres(source.databaseUrl, partial);
    }
    await rename(partial, final);
  } catch (e) {
    await rm(partial, { force: true });
    throw e;
  }
  const { size } = await stat(final);
  progress(`backup: wrote ${size} bytes in ${((performance.now() - started) / 1000).toFixed(1)} s`);
  return { path: final, size_bytes: size };
}
