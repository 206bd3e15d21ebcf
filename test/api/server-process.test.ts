import { existsSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openDatabase } from '../../src/db/database.js';
import { onPostgres } from '../helpers/database.js';
import {
  connectToServerSocket,
  freePort,
  pollUntil,
  programEnv,
  runGatehouse,
  scratchPostgres,
  startServerProcess,
  tempDataDir,
  type ServerProcess,
} from '../helpers/processes.js';

interface InitialAdmin {
  user_id: number;
  email: string;
  password: string;
  public_key: string;
  secret_key: string;
}

// One real server process (`node dist/main.js`) for the whole file: a PGlite start costs seconds.
describe(`the server process (${onPostgres ? 'PostgreSQL' : 'PGlite'})`, () => {
  let dataDir: string;
  let env: NodeJS.ProcessEnv;
  let server: ServerProcess;
  let cleanup: () => Promise<void>;
  let admin: InitialAdmin;
  let databaseUrl: string | undefined;

  beforeAll(async () => {
    const data = tempDataDir('gh-srv-');
    dataDir = data.dir;
    const db = onPostgres ? await scratchPostgres() : undefined;
    databaseUrl = db?.url;
    env = programEnv({ DATA_DIR: dataDir, PORT: String(await freePort()), DATABASE_URL: db?.url });
    server = await startServerProcess(env);
    cleanup = async () => {
      await server.stop('SIGKILL');
      await db?.drop();
      data.remove();
    };
  });
  afterAll(async () => cleanup?.());

  const adminFile = () => path.join(dataDir, 'initial-admin.json');
  const session = (headers: Record<string, string>) => fetch(`${server.url}/api/v1/auth/session`, { headers });

  it('writes initial-admin.json on first start, mode 0600, with exactly the five keys', () => {
    expect((statSync(adminFile()).mode & 0o777).toString(8)).toBe('600');
    admin = JSON.parse(readFileSync(adminFile(), 'utf8')) as InitialAdmin;
    expect(Object.keys(admin).sort()).toEqual(['email', 'password', 'public_key', 'secret_key', 'user_id']);
    expect(server.output()).toContain('initial-admin.json');
    expect(server.output()).not.toContain(admin.secret_key);
    expect(server.output()).not.toContain(admin.password);
  });

  it('sees a setting changed by the CLI while it runs, within about a second', async () => {
    const headers = { public_key: admin.public_key, secret_key: admin.secret_key };
    // api_require_https is on by default: plain HTTP is refused until the operator switches it off.
    expect((await session(headers)).status).toBe(426);
    const r = await runGatehouse(['setting', 'set', 'api_require_https', 'false'], env);
    expect(r.code, r.stderr).toBe(0);
    expect(r.json).toEqual({ name: 'api_require_https', value: false });
    const changedAt = Date.now();
    const res = await pollUntil(async () => {
      const got = await session(headers);
      return got.status === 426 ? undefined : got;
    }, 4000);
    expect(Date.now() - changedAt).toBeLessThan(3000);
    expect(res?.status).toBe(200);
  });

  it("authenticates the initial admin's machine key as a superadmin", async () => {
    const res = await session({ public_key: admin.public_key, secret_key: admin.secret_key });
    expect(res.status).toBe(200);
    const body = (await res.json()) as { data: { user_id: number; permission: number; email: string } };
    expect(body.data).toMatchObject({ user_id: admin.user_id, permission: 10, email: admin.email });
  });

  it('never logs query strings or key headers', async () => {
    const marker = `q${Date.now()}`;
    await fetch(`${server.url}/api/v1/auth/session?token=${marker}`, { headers: { public_key: admin.public_key, secret_key: admin.secret_key } });
    await new Promise((r) => setTimeout(r, 100));
    const log = server.output();
    expect(log).toContain('/api/v1/auth/session');
    expect(log).not.toContain(marker);
    expect(log).not.toContain(admin.secret_key);
  });

  it.skipIf(onPostgres)('refuses a second server on the same DATA_DIR with a clear message and a non-zero exit', async () => {
    // Both entries: `npm start` (dist/main.js) and `npx gatehouse serve`.
    for (const via of ['main', 'cli'] as const) {
      const second = await startServerProcess({ ...env, PORT: String(await freePort()) }, { via }).then(
        (s) => s,
        (e: Error) => e,
      );
      if (!(second instanceof Error)) {
        await second.stop('SIGKILL');
        throw new Error(`a second server (${via}) started on the same DATA_DIR`);
      }
      expect(second.message).toMatch(/exited with [1-9]/);
      expect(second.message).toMatch(/gatehouse\.lock is held by a running Gatehouse server \(pid \d+\)/);
    }
    // The first server is unharmed.
    expect((await session({ public_key: admin.public_key, secret_key: admin.secret_key })).status).toBe(200);
  });

  it.skipIf(onPostgres)("keeps a socket client's transaction apart from the server's own writes", async () => {
    const client = await connectToServerSocket({ host: dataDir, user: 'postgres', database: 'postgres' });
    try {
      await client.query('begin');
      await client.query('update usr_users set usr_first_name = $1 where usr_user_id = $2', ['Rolled', admin.user_id]);
      // The server's login writes a session key; it waits for the client's transaction instead of joining it.
      const login = fetch(`${server.url}/api/v1/auth/login`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ email: admin.email, password: admin.password }),
      });
      await new Promise((r) => setTimeout(r, 300));
      await client.query('rollback');
      const res = await login;
      expect(res.status).toBe(200);
      const body = (await res.json()) as { data: { public_key: string } };
      const key = await client.query('select count(*)::int as n from apk_api_keys where apk_public_key = $1', [body.data.public_key]);
      expect(key.rows[0].n).toBe(1);
      const user = await client.query('select usr_first_name from usr_users where usr_user_id = $1', [admin.user_id]);
      expect(user.rows[0].usr_first_name).toBe('Admin');
    } finally {
      await client.end();
    }
  });

  it('exits 0 on SIGTERM and releases the data directory, even with a socket client inside a transaction', async () => {
    let client: pg.Client | undefined;
    if (!onPostgres) {
      client = await connectToServerSocket({ host: dataDir, user: 'postgres', database: 'postgres' });
      await client.query('begin');
      await client.query('update usr_users set usr_first_name = $1 where usr_user_id = $2', ['Abandoned', admin.user_id]);
    }
    const stoppedAt = Date.now();
    expect(await server.stop('SIGTERM')).toBe(0);
    expect(Date.now() - stoppedAt).toBeLessThan(10_000);
    await client?.end().catch(() => {});
    expect(server.output()).toContain('shutting down');
    expect(existsSync(path.join(dataDir, 'gatehouse.lock'))).toBe(false);
    expect(existsSync(path.join(dataDir, '.s.PGSQL.5432'))).toBe(false);
    expect(existsSync(path.join(dataDir, 'gatehouse-backup.sock'))).toBe(false);
    // The CLI now opens the data directory itself, and sees what the socket wrote.
    const r = await runGatehouse(['setting', 'get', 'api_require_https'], env);
    expect(r.code, r.stderr).toBe(0);
    expect(r.json).toEqual({ name: 'api_require_https', value: false });
    expect(existsSync(path.join(dataDir, 'gatehouse.lock'))).toBe(false);
    // The request log was flushed before the database closed.
    const database = await openDatabase(databaseUrl ? { databaseUrl } : { dataDir: path.join(dataDir, 'db') });
    try {
      const logged = await database.db.selectFrom('rql_request_logs').select(['rql_feature', 'rql_status_code']).execute();
      expect(logged.filter((row) => row.rql_feature === 'auth' && row.rql_status_code === 200).length).toBeGreaterThanOrEqual(2);
      // The disconnected client's transaction was rolled back.
      const user = await database.db.selectFrom('usr_users').select('usr_first_name').where('usr_user_id', '=', admin.user_id).executeTakeFirstOrThrow();
      expect(user.usr_first_name).toBe('Admin');
    } finally {
      await database.close();
    }
  });
});
