import { existsSync } from 'node:fs';
import path from 'node:path';
import { sql, type Kysely } from 'kysely';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openDatabase } from '../../src/db/database.js';
import type { DB } from '../../src/db/types.js';
import { randomHex } from '../../src/lib/crypto.js';
import { onPostgres } from '../helpers/database.js';
import { connectToServerSocket, freePort, programEnv, runGatehouse, scratchPostgres, startServerProcess, tempDataDir, type CliResult, type ServerProcess } from '../helpers/processes.js';

type Query = (text: string) => Promise<Array<Record<string, unknown>>>;

/**
 * What a restore must reproduce: every table of the public schema with its row count and a digest of all
 * its rows (each row as JSON, sorted), plus the users as a readable sample.
 */
async function census(query: Query): Promise<{ tables: Record<string, { rows: number; digest: string }>; users: unknown[] }> {
  const names = (await query(`select tablename from pg_tables where schemaname = 'public' order by tablename`)).map((r) => String(r.tablename));
  const tables: Record<string, { rows: number; digest: string }> = {};
  for (const name of names) {
    const [row] = await query(
      `select count(*)::int as n, coalesce(md5(string_agg(j, '|' order by j)), '') as digest from (select row_to_json(t)::text as j from "${name}" t) s`,
    );
    // The scheduler's own bookkeeping (last run times) changes every few seconds while the server runs: its rows count, its content does not.
    tables[name] = { rows: Number(row!.n), digest: name === 'tsk_task_runs' ? '' : String(row!.digest) };
  }
  const users = await query('select usr_user_id::int as usr_user_id, usr_email, usr_permission, usr_first_name from usr_users order by usr_user_id');
  return { tables, users };
}

const viaClient = (client: pg.Client): Query => async (text) => (await client.query(text)).rows;
const viaKysely = (db: Kysely<DB>): Query => async (text) => (await sql.raw<Record<string, unknown>>(text).execute(db)).rows;

async function withClient<T>(config: pg.ClientConfig, fn: (q: Query) => Promise<T>): Promise<T> {
  const client = await connectToServerSocket(config);
  try {
    return await fn(viaClient(client));
  } finally {
    await client.end();
  }
}

function ok(r: CliResult): CliResult {
  expect(r.code, r.stderr).toBe(0);
  return r;
}

const createUser = (env: NodeJS.ProcessEnv, email: string) => runGatehouse(['user', 'create', '--email', email, '--password', 'long enough', '--first-name', 'Kept'], env).then(ok);

describe.skipIf(onPostgres)('backup while the server runs, and restore into its stopped data directory (PGlite)', { timeout: 240_000 }, () => {
  let data: { dir: string; remove(): void };
  let env: NodeJS.ProcessEnv;
  let server: ServerProcess;
  let backupFile: string;
  let atBackup: Awaited<ReturnType<typeof census>>;
  const socketQuery = <T>(fn: (q: Query) => Promise<T>) => withClient({ host: data.dir, user: 'postgres', database: 'postgres' }, fn);

  beforeAll(async () => {
    data = tempDataDir('gh-restore-');
    env = programEnv({ DATA_DIR: data.dir, PORT: String(await freePort()) });
    server = await startServerProcess(env);
  });
  afterAll(async () => {
    await server?.stop('SIGKILL');
    data?.remove();
  });

  it('backup create is taken by the running server, which keeps serving', async () => {
    await createUser(env, 'before-backup@example.com');
    // The server's scheduler may write between two looks; a backup framed by two equal censuses is of that state.
    for (let attempt = 0; ; attempt++) {
      const before = await socketQuery(census);
      const r = ok(await runGatehouse(['backup', 'create'], env));
      expect(r.stderr).toMatch(/backed up by the running server \(pid \d+\)/);
      expect(r.stderr).toMatch(/^backup \[#{24}\] 100% done$/m);
      backupFile = r.json.path;
      const after = await socketQuery(census);
      if (JSON.stringify(before) === JSON.stringify(after) || attempt === 3) {
        expect(after).toEqual(before);
        atBackup = before;
        break;
      }
    }
    expect(path.dirname(backupFile)).toBe(path.join(data.dir, 'backups'));
    expect((await fetch(`${server.url}/login`)).status).toBe(200);
    expect(atBackup.users).toContainEqual(expect.objectContaining({ usr_email: 'before-backup@example.com', usr_first_name: 'Kept' }));
  });

  it('restore refuses a data directory a server is running on (exit 2), and changes nothing', async () => {
    const r = await runGatehouse(['backup', 'restore', backupFile], env);
    expect(r.code, r.stderr).toBe(2);
    expect(r.stderr).toContain(`a Gatehouse server (pid ${server.child.pid}) is running on ${data.dir}; stop it, then run the restore again`);
    expect(existsSync(path.join(data.dir, 'db'))).toBe(true);
  });

  it('restore into the stopped data directory brings back exactly the backed-up rows, keeping the previous database aside', async () => {
    await createUser(env, 'after-backup@example.com');
    expect(await server.stop('SIGTERM')).toBe(0);
    // With no server, the command opens the data directory itself.
    const offline = ok(await runGatehouse(['backup', 'create'], env));
    expect(offline.stderr).toContain(`gatehouse: using the embedded database in ${data.dir} (DATA_DIR); no server is running on it`);
    expect(existsSync(offline.json.path)).toBe(true);
    const r = ok(await runGatehouse(['backup', 'restore', backupFile], env));
    expect(r.stderr).toContain(`gatehouse: using the embedded database in ${data.dir} (DATA_DIR), as the restore's target`);
    const tables = Object.keys(atBackup.tables).length;
    const rows = Object.values(atBackup.tables).reduce((n, t) => n + t.rows, 0);
    expect(r.json).toEqual({
      restored: backupFile,
      into: path.join(data.dir, 'db'),
      previous: expect.stringMatching(new RegExp(`^${path.join(data.dir, 'db')}\\.before-restore-\\d{8}-\\d{6}$`)),
      tables,
      rows,
      // No Drive file was made: the backup's blob archive is empty.
      blobs: `restored 0 Drive blobs (0 bytes) into ${path.join(data.dir, 'blobs')}`,
    });
    expect(existsSync(path.join(r.json.previous, 'PG_VERSION'))).toBe(true);
    const restored = await openDatabase({ dataDir: path.join(data.dir, 'db') });
    try {
      const now = await census(viaKysely(restored.db));
      expect(now).toEqual(atBackup);
      expect(now.users.map((u) => (u as { usr_email: string }).usr_email)).not.toContain('after-backup@example.com');
    } finally {
      await restored.close();
    }
  });
});

describe.runIf(onPostgres)('backup and restore into an empty PostgreSQL database', { timeout: 120_000 }, () => {
  let data: { dir: string; remove(): void };
  let source: { url: string; drop(): Promise<void> };
  let target: { url: string; drop(): Promise<void> };

  beforeAll(async () => {
    data = tempDataDir('gh-restore-pg-');
    source = await scratchPostgres();
    // An empty database (template0: nothing of ours in it), the way an operator makes one with createdb.
    const name = `gh_restore_${randomHex(6)}`;
    const admin = new pg.Client({ connectionString: process.env.DATABASE_URL });
    await admin.connect();
    await admin.query(`create database ${name} template template0`);
    const u = new URL(process.env.DATABASE_URL!);
    u.pathname = `/${name}`;
    target = {
      url: u.toString(),
      async drop() {
        await admin.query(`drop database if exists ${name} with (force)`);
        await admin.end();
      },
    };
  });
  afterAll(async () => {
    await target?.drop();
    await source?.drop();
    data?.remove();
  });

  it('round trip: the restored database has the same tables, row counts and rows', async () => {
    const sourceEnv = programEnv({ DATA_DIR: data.dir, DATABASE_URL: source.url });
    await createUser(sourceEnv, 'kept@example.com');
    const backup = ok(await runGatehouse(['backup', 'create'], sourceEnv));
    expect(backup.json.path).toMatch(/\.pgdump$/);
    const before = await withClient({ connectionString: source.url }, census);

    const restore = ok(await runGatehouse(['backup', 'restore', backup.json.path], programEnv({ DATA_DIR: data.dir, DATABASE_URL: target.url })));
    expect(restore.stderr).toMatch(/^gatehouse: using PostgreSQL at DATABASE_URL=postgres:\/\/postgres@127\.0\.0\.1:5432\/gh_restore_\w+, as the restore's target$/m);
    expect(restore.json).toMatchObject({ restored: backup.json.path, previous: null, tables: Object.keys(before.tables).length });
    const after = await withClient({ connectionString: target.url }, census);
    expect(after).toEqual(before);
    expect(after.users).toContainEqual(expect.objectContaining({ usr_email: 'kept@example.com', usr_first_name: 'Kept' }));
  });

  it('refuses a database that is not empty (exit 2) and leaves it as it was', async () => {
    const before = await withClient({ connectionString: source.url }, census);
    const file = ok(await runGatehouse(['backup', 'create'], programEnv({ DATA_DIR: data.dir, DATABASE_URL: source.url }))).json.path;
    const r = await runGatehouse(['backup', 'restore', file], programEnv({ DATA_DIR: data.dir, DATABASE_URL: source.url }));
    expect(r.code, r.stderr).toBe(2);
    expect(r.stderr).toMatch(/the database gh_cli_\w+ is not empty \(\d+ tables, views or sequences\); restore into an empty database/);
    expect(await withClient({ connectionString: source.url }, census)).toEqual(before);
  });
});
