import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, open, readFile, rename, rm } from 'node:fs/promises';
import path from 'node:path';
import { promisify } from 'node:util';
import { sql, type Kysely } from 'kysely';
import { DataDirLockedError, acquireDataDirLock } from '../db/data-dir-lock.js';
import { openDatabase } from '../db/database.js';
import type { DB } from '../db/types.js';
import { systemClock, type Clock } from '../lib/clock.js';
import { BackupError, backupStamp, clientToolMajor, libpqTarget, runClientTool, syncDirectory } from './create.js';
import { restoreBlobs } from './blobs.js';
import type { BackupProgress } from './progress.js';

const execFileAsync = promisify(execFile);

/** Bad input to a restore (a file that is no backup, the wrong database for it, a target in use): exit 2. */
export class RestoreInputError extends Error {}

export type BackupFormat = 'pglite' | 'pgdump';

export interface RestoreResult {
  restored: string;
  /** The data directory's database, or the PostgreSQL database's name. */
  into: string;
  /** Where the data directory's previous database was moved (null when there was none, and on PostgreSQL). */
  previous: string | null;
  tables: number;
  rows: number;
  /** What became of Drive's blob bytes: restored into DATA_DIR/blobs, or what to copy (S3, old backups). */
  blobs: string | null;
}

/** A pg_dump custom archive starts with PGDMP; a PGlite dumpDataDir archive is gzip. */
export async function backupFormatOf(file: string): Promise<BackupFormat> {
  let head: Buffer;
  try {
    const handle = await open(file, 'r');
    try {
      head = Buffer.alloc(5);
      const { bytesRead } = await handle.read(head, 0, 5, 0);
      head = head.subarray(0, bytesRead);
    } finally {
      await handle.close();
    }
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    if (code === 'ENOENT') throw new RestoreInputError(`no such file: ${file}`);
    if (code === 'EISDIR') throw new RestoreInputError(`${file} is a directory, not a backup file`);
    throw e;
  }
  if (head.toString('latin1') === 'PGDMP') return 'pgdump';
  if (head[0] === 0x1f && head[1] === 0x8b) return 'pglite';
  throw new RestoreInputError(`${file} is not a Gatehouse backup (neither a pg_dump archive nor an embedded database archive)`);
}

/** Tables of the public schema and their row counts: what a restore reports, and how it is checked. */
export async function tableCensus(db: Kysely<DB>): Promise<{ tables: number; rows: number }> {
  const { rows: tables } = await sql<{ name: string }>`select tablename as name from pg_tables where schemaname = 'public' order by tablename`.execute(db);
  let rows = 0;
  for (const { name } of tables) {
    const { rows: counted } = await sql<{ n: number | string }>`select count(*) as n from ${sql.table(name)}`.execute(db);
    rows += Number(counted[0]?.n ?? 0);
  }
  return { tables: tables.length, rows };
}

/**
 * Restores an embedded database archive into DATA_DIR/db, which no server may be using: the data
 * directory's lock is taken for the whole restore (a running server holds it: refused). The archive is
 * loaded into a staging directory beside db and checked (it must hold Gatehouse's migration table);
 * only then does the old db move aside (kept as db.before-restore-STAMP) and the staging directory take
 * its name.
 */
export async function restoreIntoDataDir(file: string, dataDir: string, progress: (p: BackupProgress) => void = () => {}, clock: Clock = systemClock): Promise<RestoreResult> {
  if ((await backupFormatOf(file)) !== 'pglite') {
    throw new RestoreInputError(`${file} is a pg_dump archive of a PostgreSQL database; set DATABASE_URL to an empty PostgreSQL database to restore it there`);
  }
  await mkdir(dataDir, { recursive: true });
  let lock;
  try {
    lock = acquireDataDirLock(dataDir, 'cli');
  } catch (e) {
    if (!(e instanceof DataDirLockedError)) throw e;
    throw new RestoreInputError(
      e.holder.role === 'server'
        ? `a Gatehouse server (pid ${e.holder.pid}) is running on ${dataDir}; stop it, then run the restore again`
        : `another gatehouse command (pid ${e.holder.pid}) is using ${dataDir}; run the restore again when it has finished`,
    );
  }
  const target = path.join(dataDir, 'db');
  const staging = path.join(dataDir, `db.restoring-${process.pid}`);
  try {
    progress({ kind: 'note', text: `restoring ${file} into ${target}` });
    progress({ kind: 'step', fraction: 0.05, label: 'reading the archive' });
    const archive = new Blob([await readFile(file)]);
    await rm(staging, { recursive: true, force: true });
    progress({ kind: 'step', fraction: 0.2, label: 'loading the data directory' });
    let census: { tables: number; rows: number };
    let restored;
    try {
      restored = await openDatabase({ dataDir: staging, loadDataDir: archive });
    } catch (e) {
      await rm(staging, { recursive: true, force: true });
      throw new RestoreInputError(`${file} could not be loaded as an embedded database: ${e instanceof Error ? e.message : String(e)}`);
    }
    try {
      const { rows } = await sql<{ n: number }>`select count(*)::int as n from pg_tables where schemaname = 'public' and tablename = 'kysely_migration'`.execute(restored.db);
      if (rows[0]?.n !== 1) throw new RestoreInputError(`${file} holds a database, but not a Gatehouse one (it has no migration table)`);
      progress({ kind: 'step', fraction: 0.7, label: 'counting rows' });
      census = await tableCensus(restored.db);
    } catch (e) {
      await restored.close();
      await rm(staging, { recursive: true, force: true });
      throw e;
    }
    await restored.close();
    progress({ kind: 'step', fraction: 0.9, label: 'moving it into place' });
    let previous: string | null = null;
    if (existsSync(target)) {
      previous = `${target}.before-restore-${backupStamp(clock.now())}`;
      for (let n = 1; existsSync(previous); n++) previous = `${target}.before-restore-${backupStamp(clock.now())}-${n}`;
      await rename(target, previous);
    }
    await rename(staging, target);
    await syncDirectory(dataDir);
    const blobs = await restoreBlobs(file, dataDir, progress);
    progress({ kind: 'step', fraction: 1, label: 'done' });
    progress({ kind: 'note', text: `restored ${census.tables} tables, ${census.rows} rows${previous ? `; the previous database is kept in ${previous}` : ''}` });
    return { restored: file, into: target, previous, ...census, blobs };
  } finally {
    lock.release();
  }
}

/** The database a PostgreSQL URL names (for messages). */
function databaseName(databaseUrl: string): string {
  if (!URL.canParse(databaseUrl)) return 'DATABASE_URL';
  return decodeURIComponent(new URL(databaseUrl).pathname.replace(/^\//, '')) || 'DATABASE_URL';
}

/**
 * Restores a pg_dump archive into the PostgreSQL database of databaseUrl with pg_restore, in one
 * transaction (all or nothing). The database must be empty (no tables outside the system schemas): a
 * restore never mixes with or drops data that is there. pg_restore reads archives of its own major
 * version and older; both versions are said up front.
 */
export async function restoreIntoPostgres(file: string, databaseUrl: string, progress: (p: BackupProgress) => void = () => {}, dataDir?: string): Promise<RestoreResult> {
  if ((await backupFormatOf(file)) !== 'pgdump') {
    throw new RestoreInputError(`${file} is an archive of the embedded database; restore it without DATABASE_URL into a stopped DATA_DIR`);
  }
  const name = databaseName(databaseUrl);
  const database = await openDatabase({ databaseUrl, pgPoolMax: 1 });
  try {
    const { rows } = await sql<{ n: number }>`
      select count(*)::int as n from pg_class c join pg_namespace s on s.oid = c.relnamespace
      where c.relkind in ('r', 'p', 'v', 'm', 'S') and s.nspname not in ('pg_catalog', 'information_schema') and s.nspname not like 'pg\_toast%'`.execute(database.db);
    const existing = Number(rows[0]?.n ?? 0);
    if (existing > 0) {
      throw new RestoreInputError(`the database ${name} is not empty (${existing} tables, views or sequences); restore into an empty database (createdb NAME, then point DATABASE_URL at it)`);
    }
    const tool = await clientToolMajor('pg_restore');
    const { rows: versionRows } = await sql<{ version: string }>`select current_setting('server_version') as version`.execute(database.db);
    const entries = await listArchiveData(file);
    progress({ kind: 'note', text: `restoring ${file} into the PostgreSQL database ${name} (pg_restore ${tool.version}, server ${versionRows[0]!.version.split(' ')[0]})` });
    const { dbname, env } = libpqTarget(databaseUrl);
    let done = 0;
    progress({ kind: 'step', fraction: 0.05, label: 'schema' });
    await runClientTool(
      'pg_restore',
      ['--verbose', '--no-owner', '--no-privileges', '--exit-on-error', '--single-transaction', '--no-password', `--dbname=${dbname}`, file],
      env,
      (line) => {
        const m = /^pg_restore: processing data for table "(.*)"$/.exec(line);
        if (!m) return;
        done++;
        progress({ kind: 'step', fraction: 0.05 + 0.85 * (done / Math.max(entries, done)), label: `table ${m[1]}` });
      },
    );
    progress({ kind: 'step', fraction: 0.95, label: 'counting rows' });
    const census = await tableCensus(database.db);
    // Drive's blobs go into this server's DATA_DIR (or the manifest says what to copy).
    const blobs = dataDir === undefined ? null : await restoreBlobs(file, dataDir, progress);
    progress({ kind: 'step', fraction: 1, label: 'done' });
    progress({ kind: 'note', text: `restored ${census.tables} tables, ${census.rows} rows` });
    return { restored: file, into: name, previous: null, ...census, blobs };
  } finally {
    await database.close();
  }
}

/** How many tables' data an archive holds (its TABLE DATA entries): the restore's progress steps. */
async function listArchiveData(file: string): Promise<number> {
  try {
    const { stdout } = await execFileAsync('pg_restore', ['--list', file], { maxBuffer: 64 * 1024 * 1024 });
    return stdout.split('\n').filter((line) => / TABLE DATA /.test(line)).length;
  } catch (e) {
    const err = e as NodeJS.ErrnoException & { stderr?: string };
    if (err.code === 'ENOENT') throw new BackupError('pg_restore is not installed (PATH); install the PostgreSQL client tools');
    const why = (err.stderr ?? err.message).trim();
    if (/unsupported version/.test(why)) {
      throw new BackupError(`pg_restore cannot read ${file}: ${why}\nthe archive was written by a newer pg_dump; install newer PostgreSQL client tools`);
    }
    throw new RestoreInputError(`${file} could not be read by pg_restore: ${why}`);
  }
}
