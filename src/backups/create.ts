import { execFile, spawn } from 'node:child_process';
import { link, mkdir, open, rm, stat, unlink } from 'node:fs/promises';
import path from 'node:path';
import { promisify } from 'node:util';
import { sql, type Kysely } from 'kysely';
import type { BlobStoreConfig } from '../config.js';
import type { Database } from '../db/database.js';
import type { DB } from '../db/types.js';
import { formatBytes } from '../lib/byte-size.js';
import { systemClock, type Clock } from '../lib/clock.js';
import { randomHex } from '../lib/crypto.js';
import { backUpBlobs, sideFilesOf } from './blobs.js';
import { backupsDir } from './paths.js';
import type { BackupProgress } from './progress.js';

export interface BackupSource {
  database: Database;
  /** The PostgreSQL connection string pg_dump connects with; needed when database.kind is 'postgres'. */
  databaseUrl?: string;
  clock?: Clock;
  /** Where Drive's blob bytes are: archived beside the dump (fs) or named in its manifest (s3). */
  blobStore?: BlobStoreConfig;
}

export interface BackupResult {
  path: string;
  size_bytes: number;
}

export interface BackupOptions {
  /** A folder under DATA_DIR/backups ('scheduled' for the scheduled backups); default the folder itself. */
  folder?: string;
  /**
   * The database connection the caller already holds (a scheduled task runs on the connection holding
   * its lock). On the embedded database that is the only connection: asking for another would wait forever.
   */
  connection?: Kysely<DB>;
}

export class BackupError extends Error {}

/** The services a running process has, as a backup source. */
export function backupSourceOf(services: { database: Database; config: { databaseUrl: string | undefined; blobStore?: BlobStoreConfig }; clock: Clock }): BackupSource {
  return { database: services.database, databaseUrl: services.config.databaseUrl, clock: services.clock, ...(services.config.blobStore ? { blobStore: services.config.blobStore } : {}) };
}

/** 20260301-120000: the time in a backup's file name (UTC). */
export function backupStamp(d: Date): string {
  return d.toISOString().slice(0, 19).replace(/[-:]/g, '').replace('T', '-');
}

/** The file name ending of a backup of this kind of database. */
export function backupExtension(kind: Database['kind']): string {
  return kind === 'pglite' ? '.pglite.tar.gz' : '.pgdump';
}

const WRITE_CHUNK_BYTES = 1 << 20;

/**
 * The embedded database's data directory as a gzipped tar (PGlite dumpDataDir) after a CHECKPOINT, taken
 * while holding the database's one connection: no transaction of this process, and no exchange of a client
 * of its socket (those hold the same connection), is half-done. It loads back with PGlite's loadDataDir.
 */
async function dumpPGlite(database: Database, target: string, connection: Kysely<DB> | undefined, progress: (p: BackupProgress) => void): Promise<void> {
  const pglite = database.pglite;
  if (!pglite) throw new BackupError('the embedded database is not open in this process');
  const archive = async (conn: Kysely<DB>): Promise<Blob> => {
    progress({ kind: 'step', fraction: 0.05, label: 'checkpoint' });
    await sql`checkpoint`.execute(conn);
    progress({ kind: 'step', fraction: 0.1, label: 'archiving the data directory' });
    return pglite.dumpDataDir('gzip');
  };
  const blob = connection ? await archive(connection) : await database.db.connection().execute(archive);
  const bytes = new Uint8Array(await blob.arrayBuffer());
  const file = await open(target, 'wx', 0o600);
  try {
    for (let offset = 0; offset < bytes.length; offset += WRITE_CHUNK_BYTES) {
      progress({ kind: 'step', fraction: 0.7 + 0.25 * (offset / bytes.length), label: `writing ${formatBytes(offset)} of ${formatBytes(bytes.length)}` });
      const chunk = bytes.subarray(offset, offset + WRITE_CHUNK_BYTES);
      let written = 0;
      while (written < chunk.length) written += (await file.write(chunk, written)).bytesWritten;
    }
    await file.sync();
  } finally {
    await file.close();
  }
}

const execFileAsync = promisify(execFile);

/** The major version of an installed client tool (pg_dump, pg_restore), from its --version. */
export async function clientToolMajor(tool: 'pg_dump' | 'pg_restore'): Promise<{ version: string; major: number }> {
  let stdout: string;
  try {
    ({ stdout } = await execFileAsync(tool, ['--version']));
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') throw new BackupError(`${tool} is not installed (PATH); install the PostgreSQL client tools`);
    throw new BackupError(`${tool} --version failed: ${e instanceof Error ? e.message : String(e)}`);
  }
  const m = /\(PostgreSQL\) ((\d+)[^\s]*)/.exec(stdout);
  if (!m) throw new BackupError(`${tool} --version printed no PostgreSQL version: ${stdout.trim()}`);
  return { version: m[1]!, major: Number(m[2]) };
}

/** The server's version, as `show server_version` and its major number. */
export async function serverVersion(db: Kysely<DB>): Promise<{ version: string; major: number }> {
  const { rows } = await sql<{ version: string; num: string }>`select current_setting('server_version') as version, current_setting('server_version_num') as num`.execute(db);
  const row = rows[0]!;
  return { version: row.version.split(' ')[0]!, major: Math.floor(Number(row.num) / 10000) };
}

/** The ordinary tables outside the system schemas: what pg_dump dumps the contents of, one by one. */
async function userTableCount(db: Kysely<DB>): Promise<number> {
  const { rows } = await sql<{ n: number }>`
    select count(*)::int as n from pg_class c join pg_namespace s on s.oid = c.relnamespace
    where c.relkind in ('r', 'p') and s.nspname not in ('pg_catalog', 'information_schema') and s.nspname not like 'pg\_toast%'`.execute(db);
  return Number(rows[0]?.n ?? 0);
}

/** libpq reads the URL; the password travels in PGPASSWORD, never on the command line. */
export function libpqTarget(databaseUrl: string): { dbname: string; env: NodeJS.ProcessEnv } {
  const env = { ...process.env };
  let dbname = databaseUrl;
  // A Unix-socket URI (postgres://user@/db?host=/dir) has no host part for WHATWG URL, but libpq reads it.
  if (URL.canParse(databaseUrl)) {
    const url = new URL(databaseUrl);
    if (url.password) env.PGPASSWORD = decodeURIComponent(url.password);
    url.password = '';
    dbname = url.toString();
  }
  return { dbname, env };
}

/**
 * Runs a PostgreSQL client tool; each stderr line goes to onLine (its --verbose progress), the last few
 * are kept for the error message.
 */
export function runClientTool(tool: 'pg_dump' | 'pg_restore', args: string[], env: NodeJS.ProcessEnv, onLine: (line: string) => void): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    const child = spawn(tool, args, { env, stdio: ['ignore', 'ignore', 'pipe'] });
    let pending = '';
    const errors: string[] = [];
    const take = (line: string) => {
      // --verbose chatter ("pg_dump: dumping contents of ...") is progress; anything else is kept for the message.
      if (!/^pg_\w+: (?!error:|warning:|detail:|hint:)/.test(line)) errors.push(line);
      if (errors.length > 20) errors.shift();
      onLine(line);
    };
    child.stderr.on('data', (chunk: Buffer) => {
      pending += chunk.toString('utf8');
      const lines = pending.split('\n');
      pending = lines.pop() ?? '';
      for (const line of lines) take(line);
    });
    child.on('error', (e: NodeJS.ErrnoException) =>
      reject(new BackupError(e.code === 'ENOENT' ? `${tool} is not installed (PATH); install the PostgreSQL client tools` : `${tool} could not start: ${e.message}`)),
    );
    child.on('close', (code) => {
      if (pending) take(pending);
      if (code === 0) resolve();
      else reject(new BackupError(`${tool} failed (exit ${code}): ${errors.join('\n').trim()}`));
    });
  });
}

/**
 * pg_dump in its custom format (restore with pg_restore). pg_dump takes one snapshot, so the dump is
 * consistent. pg_dump refuses a server of a newer major version than its own: that is said up front.
 */
async function dumpPostgres(db: Kysely<DB>, databaseUrl: string, target: string, progress: (p: BackupProgress) => void): Promise<void> {
  const [tool, server, tables] = await Promise.all([clientToolMajor('pg_dump'), serverVersion(db), userTableCount(db)]);
  if (server.major > tool.major) {
    throw new BackupError(`pg_dump ${tool.version} cannot dump a PostgreSQL ${server.version} server; install the PostgreSQL ${server.major} client tools`);
  }
  progress({ kind: 'step', fraction: 0.05, label: `pg_dump ${tool.version}, server ${server.version}` });
  const { dbname, env } = libpqTarget(databaseUrl);
  let done = 0;
  await runClientTool('pg_dump', ['--format=custom', '--verbose', '--no-password', `--file=${target}`, `--dbname=${dbname}`], env, (line) => {
    const m = /^pg_dump: dumping contents of table "(.*)"$/.exec(line);
    if (!m) return;
    done++;
    progress({ kind: 'step', fraction: 0.05 + 0.9 * (done / Math.max(tables, done)), label: `table ${m[1]}` });
  });
  const file = await open(target, 'r+');
  try {
    await file.chmod(0o600);
    await file.sync();
  } finally {
    await file.close();
  }
}

/** fsync of a directory: a file's new name in it survives a crash. */
export async function syncDirectory(dir: string): Promise<void> {
  const handle = await open(dir, 'r');
  try {
    await handle.sync();
  } finally {
    await handle.close();
  }
}

/**
 * Gives the finished temporary file its final name without ever replacing a file: link() fails when the
 * name exists, and then the next free name (-1, -2, ...) is tried. The directory is synced so that the
 * new name survives a crash.
 */
async function publish(partial: string, dir: string, base: string, ext: string): Promise<string> {
  for (let n = 0; ; n++) {
    const candidate = path.join(dir, n === 0 ? `${base}${ext}` : `${base}-${n}${ext}`);
    try {
      await link(partial, candidate);
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code === 'EEXIST') continue;
      throw e;
    }
    await unlink(partial);
    await syncDirectory(dir);
    return candidate;
  }
}

/**
 * Writes a consistent dump of the database into DATA_DIR/backups (or a folder of it) and returns its path
 * and size. The dump is written to a temporary file, synced, and only then linked under its final name,
 * which never replaces an existing file. Progress goes to `progress` (the CLI draws it on stderr).
 */
export async function createBackup(
  source: BackupSource,
  dataDir: string,
  progress: (p: BackupProgress) => void = () => {},
  opts: BackupOptions = {},
): Promise<BackupResult> {
  const dir = opts.folder ? path.join(backupsDir(dataDir), opts.folder) : backupsDir(dataDir);
  await mkdir(dir, { recursive: true, mode: 0o700 });
  const base = `gatehouse-${backupStamp((source.clock ?? systemClock).now())}`;
  const kind = source.database.kind;
  const ext = backupExtension(kind);
  const partial = path.join(dir, `.${base}-${randomHex(4)}${ext}.partial`);
  progress({ kind: 'note', text: `dumping the ${kind === 'pglite' ? 'embedded' : 'PostgreSQL'} database into ${dir}` });
  const started = performance.now();
  let final: string;
  try {
    if (kind === 'pglite') {
      await dumpPGlite(source.database, partial, opts.connection, progress);
    } else {
      if (!source.databaseUrl) throw new BackupError('no database URL to dump from');
      await dumpPostgres(opts.connection ?? source.database.db, source.databaseUrl, partial, progress);
    }
    progress({ kind: 'step', fraction: 0.97, label: 'naming the file' });
    final = await publish(partial, dir, base, ext);
  } catch (e) {
    await rm(partial, { force: true });
    throw e;
  }
  // Drive's bytes beside the dump (issue 35): a backup without them is not a backup; all or nothing.
  if (source.blobStore) {
    try {
      await backUpBlobs(final, dataDir, source.blobStore, progress);
    } catch (e) {
      for (const f of [final, ...sideFilesOf(final)]) await rm(f, { force: true });
      throw e;
    }
  }
  const { size } = await stat(final);
  progress({ kind: 'step', fraction: 1, label: 'done' });
  progress({ kind: 'note', text: `wrote ${size} bytes in ${((performance.now() - started) / 1000).toFixed(1)} s: ${final}` });
  return { path: final, size_bytes: size };
}
