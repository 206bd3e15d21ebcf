import { mkdirSync, mkdtempSync, readdirSync, rmSync, symlinkSync, utimesSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { revokeKey } from '../../src/accounts/api-keys.js';
import { backupsDir } from '../../src/backups/paths.js';
import { latestSchemaVersion } from '../../src/db/migrate.js';
import { errorLogPath } from '../../src/logs/error-log.js';
import { serviceVersion } from '../../src/version.js';
import { signIn } from '../helpers/browser-session.js';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { onPostgres } from '../helpers/database.js';

const M = '/api/v1/management';
const ENDPOINTS = ['', 'health', 'stats', 'version', 'databases', 'errors/recent', 'backups/list', 'backups/fetch', 'tiers/audit', 'store/conflicts', 'store/drift', 'store/unresolved'];
const url = (endpoint: string) => (endpoint === '' ? M : `${M}/${endpoint}`);

/**
 * A probe: after real authentication of a superadmin machine key, a request carrying x-test-as-browser has
 * its principal replaced by the browser principal of the same user, so every endpoint can be tried with a
 * browser principal cheaply. A real signed-in superadmin (cookie and CSRF) is tried below as well.
 */
function browserPrincipalProbe(api: FastifyInstance) {
  api.addHook('onRequest', async (request) => {
    if (request.headers['x-test-as-browser'] && request.principal) {
      request.principal = { ...request.principal, credential: 'browser', apiKey: null, capability: 4 };
    }
  });
}

describe('management: authorization (both gates before endpoint resolution)', () => {
  let t: TestApp;
  let dataDir: string;
  let superadmin: Record<string, string>;

  beforeAll(async () => {
    dataDir = mkdtempSync(path.join(os.tmpdir(), 'gh-mgmt-auth-'));
    t = await createTestApp({ config: { dataDir } });
    superadmin = (await t.keyHeaders({ userPermission: 10, permission: 4 })).headers;
  });
  afterAll(async () => {
    await t.close();
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('admits a machine key whose owner is a superadmin, on every endpoint', async () => {
    writeFileSync(path.join(dataDir, 'present.txt'), 'x');
    for (const endpoint of ENDPOINTS) {
      const res = await t.request({ method: 'GET', url: url(endpoint), headers: superadmin });
      // backups/fetch without a path is a 400 from the handler, which proves the gates let it through.
      const expected = endpoint === 'backups/fetch' ? 400 : 200;
      expect(res.statusCode, endpoint).toBe(expected);
      expect(res.json.api_version, endpoint).toBe('1.0');
    }
  });

  it('refuses a session key with 403 AuthenticationError even for a superadmin, before resolving the endpoint', async () => {
    const { email, password } = await t.createUser({ permission: 10 });
    const { headers } = await t.login(email, password);
    for (const endpoint of [...ENDPOINTS, 'no/such/endpoint']) {
      for (const method of ['GET', 'POST'] as const) {
        const res = await t.request({ method, url: url(endpoint), headers });
        expect(res.statusCode, `${method} ${endpoint}`).toBe(403);
        expect(res.json, `${method} ${endpoint}`).toEqual({
          api_version: '1.0',
          errortype: 'AuthenticationError',
          error: 'Management requires a machine key; session keys and browser sessions are refused',
          data: {},
        });
      }
    }
  });

  it('refuses the machine key of a non-superadmin with 403, whatever its apk_permission', async () => {
    for (const userPermission of [0, 5, 9]) {
      const { headers } = await t.keyHeaders({ userPermission, permission: 4 });
      for (const endpoint of ['', 'health', 'backups/fetch?path=x', 'no/such/endpoint']) {
        const res = await t.request({ method: 'GET', url: url(endpoint), headers });
        expect(res.statusCode, `${userPermission} ${endpoint}`).toBe(403);
        expect(res.json).toEqual({
          api_version: '1.0',
          errortype: 'AuthenticationError',
          error: 'Management requires a key whose owner has permission 10 or more',
          data: {},
        });
      }
      const post = await t.request({ method: 'POST', url: url('health'), headers });
      expect(post.statusCode).toBe(403);
    }
  });

  it('does not gate on apk_permission: a superadmin machine key of any capability, even write-only 2, reads management', async () => {
    for (const permission of [1, 2, 3, 4]) {
      const { headers } = await t.keyHeaders({ userPermission: 10, permission });
      const res = await t.request({ method: 'GET', url: url('health'), headers });
      expect(res.statusCode, String(permission)).toBe(200);
    }
  });

  it('still applies every ordinary key check to a superadmin machine key', async () => {
    const { userId } = await t.createUser({ permission: 10 });
    const now = t.clock.now();
    const inactive = await t.createMachineKey({ userId, active: false });
    const revoked = await t.createMachineKey({ userId });
    await revokeKey(t.services.db, revoked.apiKeyId, now);
    const expired = await t.createMachineKey({ userId, expiresTime: new Date(now.getTime() - 1000) });
    const notYet = await t.createMachineKey({ userId, startTime: new Date(now.getTime() + 60_000) });
    const restricted = await t.createMachineKey({ userId, ipRestriction: '192.0.2.10' });
    const cases: Array<[string, Record<string, string>, number]> = [
      ['inactive', { public_key: inactive.publicKey, secret_key: inactive.secretKey }, 401],
      ['revoked', { public_key: revoked.publicKey, secret_key: revoked.secretKey }, 401],
      ['expired', { public_key: expired.publicKey, secret_key: expired.secretKey }, 401],
      ['not yet valid', { public_key: notYet.publicKey, secret_key: notYet.secretKey }, 401],
      ['IP restricted', { public_key: restricted.publicKey, secret_key: restricted.secretKey }, 401],
      ['wrong secret', { public_key: restricted.publicKey, secret_key: 'f'.repeat(64) }, 401],
      ['missing headers', {}, 400],
    ];
    for (const [name, headers, status] of cases) {
      const res = await t.request({ method: 'GET', url: url('health'), headers, remoteAddress: '203.0.113.20' });
      expect(res.statusCode, name).toBe(status);
      expect(res.json.errortype, name).toBe('AuthenticationError');
    }
    const allowed = await t.request({
      method: 'GET',
      url: url('health'),
      headers: { public_key: restricted.publicKey, secret_key: restricted.secretKey },
      remoteAddress: '192.0.2.10',
    });
    expect(allowed.statusCode).toBe(200);
  });

  it('answers 405 ActionError to every non-GET method, after the gates and before resolution', async () => {
    for (const method of ['POST', 'PUT', 'DELETE', 'PATCH'] as const) {
      for (const endpoint of [...ENDPOINTS, 'no/such/endpoint']) {
        const res = await t.request({ method, url: url(endpoint), headers: superadmin, payload: { path: 'x' } });
        expect(res.statusCode, `${method} ${endpoint}`).toBe(405);
        expect(res.headers.allow).toBe('GET');
        expect(res.json).toEqual({ api_version: '1.0', errortype: 'ActionError', error: 'Management is read-only: only GET is allowed', data: {} });
      }
    }
    // A body that does not even parse is not looked at: the method is refused first.
    const res = await t.request({ method: 'POST', url: url('health'), headers: { ...superadmin, 'content-type': 'application/json' }, payload: '{not json' });
    expect(res.statusCode).toBe(405);
  });

  it('changes nothing on a refused write: the backups directory and the database stay as they were', async () => {
    mkdirSync(backupsDir(dataDir), { recursive: true });
    writeFileSync(path.join(backupsDir(dataDir), 'keep.tar.gz'), 'dump');
    const before = readdirSync(backupsDir(dataDir));
    for (const method of ['POST', 'PUT', 'DELETE'] as const) {
      await t.request({ method, url: `${url('backups/fetch')}?path=keep.tar.gz`, headers: superadmin });
    }
    expect(readdirSync(backupsDir(dataDir))).toEqual(before);
  });

  it('answers 404 NotFound for an unknown endpoint, once the gates pass', async () => {
    for (const endpoint of ['nope', 'backups', 'errors', 'backups/list/extra', 'Health']) {
      const res = await t.request({ method: 'GET', url: url(endpoint), headers: superadmin });
      expect(res.statusCode, endpoint).toBe(404);
      expect(res.json).toEqual({ api_version: '1.0', errortype: 'NotFound', error: `No management endpoint '${endpoint}'`, data: {} });
    }
  });

  it('accepts a trailing slash on the root and on an endpoint', async () => {
    expect((await t.request({ method: 'GET', url: `${M}/`, headers: superadmin })).statusCode).toBe(200);
    expect((await t.request({ method: 'GET', url: `${M}/health/`, headers: superadmin })).statusCode).toBe(200);
  });
});

describe('management: browser sessions are refused (simulated principal; see probe)', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp({ config: { dataDir: mkdtempSync(path.join(os.tmpdir(), 'gh-mgmt-br-')) }, extraApiRoutes: browserPrincipalProbe });
  });
  afterAll(async () => t.close());

  it('refuses a superadmin browser session with 403 AuthenticationError on every endpoint', async () => {
    const { headers } = await t.keyHeaders({ userPermission: 10 });
    for (const endpoint of [...ENDPOINTS, 'no/such/endpoint']) {
      const res = await t.request({ method: 'GET', url: url(endpoint), headers: { ...headers, 'x-test-as-browser': '1' } });
      expect(res.statusCode, endpoint).toBe(403);
      expect(res.json.errortype).toBe('AuthenticationError');
    }
    // The same key without the probe is admitted, so the 403 above is the browser credential's.
    expect((await t.request({ method: 'GET', url: url('health'), headers })).statusCode).toBe(200);
  });

  it('refuses a real superadmin browser session (cookie + CSRF) with 403 AuthenticationError', async () => {
    const admin = await t.createUser({ permission: 10 });
    const c = await signIn(t, admin.email, admin.password);
    for (const endpoint of ['', 'health', 'stats', 'backups/list']) {
      const res = await c.api('GET', url(endpoint));
      expect(res.statusCode, endpoint).toBe(403);
      expect(res.json.errortype).toBe('AuthenticationError');
    }
  });
});

describe('management endpoints', () => {
  let t: TestApp;
  let dataDir: string;
  let headers: Record<string, string>;
  const get = (endpoint: string) => t.request({ method: 'GET', url: url(endpoint), headers });

  beforeAll(async () => {
    dataDir = mkdtempSync(path.join(os.tmpdir(), 'gh-mgmt-'));
    t = await createTestApp({ config: { dataDir } });
    headers = (await t.keyHeaders({ userPermission: 10, permission: 1 })).headers;
  });
  afterAll(async () => {
    await t.close();
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('root lists every endpoint with method, path, description and its effective auth, from the registry', async () => {
    const res = await get('');
    expect(res.statusCode).toBe(200);
    expect(res.json.success_message).toBe('');
    const auth = { requires_machine_key: true, min_user_permission: 10, capability: null };
    expect(res.json.data.endpoints.map((e: { path: string }) => e.path)).toEqual(ENDPOINTS.map(url).map((u) => u.replace('/api/v1', '')));
    for (const e of res.json.data.endpoints) {
      expect(e.method).toBe('GET');
      expect(typeof e.description).toBe('string');
      expect(e.description.length).toBeGreaterThan(10);
      expect(e.auth).toEqual(auth);
    }
  });

  it('health is {ok: true, version}', async () => {
    const res = await get('health');
    expect(res.json).toEqual({ api_version: '1.0', success_message: '', data: { ok: true, version: '0.1.0' } });
    expect(serviceVersion()).toBe('0.1.0');
  });

  it('version gives the system version, the schema version from the migrations, and per-plugin versions', async () => {
    const res = await get('version');
    expect(res.statusCode).toBe(200);
    expect(res.json.data).toEqual({
      version: '0.1.0',
      node_version: process.version,
      schema_version: latestSchemaVersion(),
      schema_applied: latestSchemaVersion(),
      schema_pending: [],
      plugins: t.services.plugins.list().map((p) => ({ name: p.name, version: p.version, active: p.active })),
    });
    expect(latestSchemaVersion()).toBe(Object.keys((await import('../../src/db/migrations/index.js')).migrations).sort().at(-1));
  });

  it('databases lists the databases the site can reach, marking the current one', async () => {
    const res = await get('databases');
    expect(res.statusCode).toBe(200);
    const data = res.json.data;
    const current = (await t.services.db.selectNoFrom((eb) => eb.fn<string>('current_database', []).as('name')).executeTakeFirstOrThrow()).name;
    expect(data.kind).toBe(onPostgres ? 'postgres' : 'pglite');
    expect(data.current).toBe(current);
    expect(data.current_size_bytes).toBeGreaterThan(0);
    if (onPostgres) {
      expect(data.databases).toContainEqual({ name: current, current: true });
      expect(data.databases.filter((d: { current: boolean }) => d.current)).toHaveLength(1);
      expect(data.databases.some((d: { name: string }) => d.name.startsWith('template'))).toBe(false);
    } else {
      expect(data.databases).toEqual([{ name: current, current: true }]);
    }
  });

  it('stats reports host, database, cron and backup-profile health, and no secrets', async () => {
    const res = await get('stats');
    expect(res.statusCode).toBe(200);
    const d = res.json.data;
    expect(Object.keys(d).sort()).toEqual(['backups', 'cron', 'database', 'databases', 'disk', 'load', 'memory', 'uptime', 'version']);
    expect(d.version).toBe('0.1.0');
    expect(Object.keys(d.disk).sort()).toEqual(['available_bytes', 'free_bytes', 'total_bytes', 'used_bytes']);
    expect(d.disk.total_bytes).toBeGreaterThan(0);
    expect(d.memory.total_bytes).toBe(os.totalmem());
    expect(d.memory.process_rss_bytes).toBeGreaterThan(0);
    expect(Object.keys(d.load).sort()).toEqual(['cpus', 'fifteen_minutes', 'five_minutes', 'one_minute']);
    expect(d.load.cpus).toBe(os.availableParallelism());
    expect(d.uptime.process_seconds).toBeGreaterThanOrEqual(0);
    expect(d.database).toMatchObject({ kind: onPostgres ? 'postgres' : 'pglite', alive: true });
    expect(typeof d.database.latency_ms).toBe('number');
    expect(d.databases.current).toBeTypeOf('string');
    // An inactive plugin's tasks are not listed (they do not exist while it is inactive).
    const registered = t.services.scheduler.tasks.filter((task) => !task.plugin || task.plugin.isActive());
    expect(t.services.scheduler.tasks.some((task) => task.name === 'mailbox_reseal')).toBe(true);
    expect(d.cron.map((c: { name: string }) => c.name)).toEqual(registered.map((task) => task.name));
    expect(d.cron.map((c: { name: string }) => c.name)).not.toContain('mailbox_reseal');
    expect(d.cron.find((c: { name: string }) => c.name === 'purge_request_logs')).toEqual(
      {
        name: 'purge_request_logs',
        description: 'Delete request log rows older than api_request_log_retention_days',
        registered: true,
        interval_seconds: 3600,
        status: 'never_run',
        last_start_time: null,
        last_end_time: null,
        last_outcome: null,
        last_error: null,
        run_count: 0,
      },
    );
    const neverRun = { last_run_time: null, last_outcome: null, last_error: null, reached_bucket: null, recovery_key_fingerprint: null };
    // The site profile's producer (backup_site) ships, off until backup_schedule_hours is set; the manager profile belongs to a management node.
    expect(d.backups).toEqual({
      site: {
        configured: true,
        scheduled: false,
        interval_seconds: null,
        ...neverRun,
        schedule_hours: 0,
        keep: 7,
        last_backup_path: null,
        last_backup_time: null,
        last_backup_size_bytes: null,
        kept_count: 0,
        next_due_time: null,
      },
      manager: {
        configured: false,
        scheduled: false,
        interval_seconds: null,
        ...neverRun,
        schedule_hours: null,
        keep: null,
        last_backup_path: null,
        last_backup_time: null,
        last_backup_size_bytes: null,
        kept_count: null,
        next_due_time: null,
      },
    });
    const text = res.body;
    for (const secret of [headers.secret_key!, process.env.DATABASE_URL ?? 'postgres://', process.env.REDIS_URL ?? 'redis://']) {
      expect(text).not.toContain(secret);
    }
  });

  /** A row as the scheduler records a finished run (written directly: the records are the source). */
  const recordRun = (name: string, outcome: 'success' | 'error', result: Record<string, unknown> | null, error: string | null = null) =>
    t.services.db
      .insertInto('tsk_task_runs')
      .values({
        tsk_name: name,
        tsk_last_start_time: t.clock.now(),
        tsk_last_end_time: t.clock.now(),
        tsk_last_outcome: outcome,
        tsk_last_error: error,
        tsk_last_result: result === null ? null : JSON.stringify(result),
        tsk_run_count: 1,
      })
      .onConflict((oc) =>
        oc.column('tsk_name').doUpdateSet({
          tsk_last_start_time: t.clock.now(),
          tsk_last_end_time: t.clock.now(),
          tsk_last_outcome: outcome,
          tsk_last_error: error,
          tsk_last_result: result === null ? null : JSON.stringify(result),
        }),
      )
      .execute();

  it('stats cron health follows the scheduler records: ok, failing, overdue, and recorded tasks no longer registered', async () => {
    await recordRun('purge_request_logs', 'success', { deleted: 0, retention_days: 90 });
    const ran = (await get('stats')).json.data.cron[0];
    expect(ran).toEqual({
      name: 'purge_request_logs',
      description: 'Delete request log rows older than api_request_log_retention_days',
      registered: true,
      interval_seconds: 3600,
      status: 'ok',
      last_start_time: '2026-03-01 12:00:00',
      last_end_time: '2026-03-01 12:00:00',
      last_outcome: 'success',
      last_error: null,
      run_count: 1,
    });
    await recordRun('purge_request_logs', 'error', null, 'relation missing');
    expect((await get('stats')).json.data.cron[0]).toMatchObject({ status: 'failing', last_outcome: 'error', last_error: 'relation missing' });
    t.clock.advanceSeconds(2 * 3600 + 1);
    expect((await get('stats')).json.data.cron[0].status).toBe('overdue');
    await recordRun('retired_task', 'success', {});
    const cron = (await get('stats')).json.data.cron;
    expect(cron.map((c: { name: string; registered: boolean }) => [c.name, c.registered])).toEqual([
      ...t.services.scheduler.tasks.filter((task) => !task.plugin || task.plugin.isActive()).map((task) => [task.name, true]),
      ['retired_task', false],
    ]);
    await t.services.db.deleteFrom('tsk_task_runs').execute();
  });

  it('stats backups block reflects the backup_site runs: scheduled, last run, bucket, recovery-key fingerprint', async () => {
    await t.services.settings.set('backup_schedule_hours', 24);
    try {
      await recordRun('backup_site', 'success', { reached_bucket: true, recovery_key_fingerprint: 'SHA256:3f2a9c', file: 'scheduled/x.pglite.tar.gz' });
      const after = (await get('stats')).json.data;
      expect(after.backups.site).toMatchObject({
        configured: true,
        scheduled: true,
        interval_seconds: 86_400,
        last_run_time: t.clock.now().toISOString().slice(0, 19).replace('T', ' '),
        last_outcome: 'success',
        last_error: null,
        reached_bucket: true,
        recovery_key_fingerprint: 'SHA256:3f2a9c',
        schedule_hours: 24,
      });
      expect(after.backups.manager.configured).toBe(false);
      expect(after.cron.map((c: { name: string }) => c.name)).toContain('backup_site');
      await recordRun('backup_site', 'error', null, 'disk full');
      expect((await get('stats')).json.data.backups.site).toMatchObject({ last_outcome: 'error', last_error: 'disk full', reached_bucket: false, recovery_key_fingerprint: null });
    } finally {
      await t.services.settings.set('backup_schedule_hours', 0);
      await t.services.db.deleteFrom('tsk_task_runs').execute();
    }
  });

  describe('errors/recent', () => {
    const write = (lines: string[]) => {
      mkdirSync(path.dirname(errorLogPath(dataDir)), { recursive: true });
      writeFileSync(errorLogPath(dataDir), lines.map((l) => `${l}\n`).join(''));
    };

    it('reads DATA_DIR/logs/error.log', () => {
      expect(errorLogPath('/srv/gh')).toBe('/srv/gh/logs/error.log');
    });

    it('is empty, not an error, before anything was logged', async () => {
      rmSync(path.join(dataDir, 'logs'), { recursive: true, force: true });
      const res = await get('errors/recent');
      expect(res.json.data).toEqual({ limit: 20, count: 0, lines: [], file_present: false, scan_limited: false });
    });

    it('returns the last 20 lines matching Fatal, Exception or Error by default, oldest first', async () => {
      const lines: string[] = [];
      for (let i = 0; i < 30; i++) {
        lines.push(`info ${i}: request served`);
        lines.push(i % 3 === 0 ? `PHP Fatal ${i}` : i % 3 === 1 ? `Unhandled Exception ${i}` : `{"level":"error","msg":"Error ${i}"}`);
      }
      write(lines);
      const res = await get('errors/recent');
      expect(res.statusCode).toBe(200);
      const expected = lines.filter((l) => !l.startsWith('info')).slice(-20);
      expect(res.json.data).toEqual({ limit: 20, count: 20, lines: expected, file_present: true, scan_limited: false });
    });

    it('honours limit, caps it at 200, and refuses anything but a positive integer', async () => {
      const lines = Array.from({ length: 260 }, (_, i) => `Error number ${i}`);
      write(lines);
      const five = await t.request({ method: 'GET', url: `${url('errors/recent')}?limit=5`, headers });
      expect(five.json.data.lines).toEqual(lines.slice(-5));
      const capped = await t.request({ method: 'GET', url: `${url('errors/recent')}?limit=1000`, headers });
      expect(capped.json.data.limit).toBe(200);
      expect(capped.json.data.lines).toEqual(lines.slice(-200));
      const exact = await t.request({ method: 'GET', url: `${url('errors/recent')}?limit=200`, headers });
      expect(exact.json.data.lines).toHaveLength(200);
      for (const bad of ['0', '-1', 'abc', '1.5', '1e3', '9999999999', '%20']) {
        const res = await t.request({ method: 'GET', url: `${url('errors/recent')}?limit=${bad}`, headers });
        expect(res.statusCode, bad).toBe(400);
        expect(res.json).toEqual({ api_version: '1.0', errortype: 'TransactionError', error: 'limit must be a positive integer', data: { field: 'limit' } });
      }
      const twice = await t.request({ method: 'GET', url: `${url('errors/recent')}?limit=1&limit=2`, headers });
      expect(twice.statusCode).toBe(400);
    });
  });

  describe('backups/list and backups/fetch', () => {
    let outside: string;
    const fetchPath = (p: string) => t.request({ method: 'GET', url: `${url('backups/fetch')}?path=${p}`, headers });

    beforeAll(() => {
      const dir = backupsDir(dataDir);
      mkdirSync(path.join(dir, 'site'), { recursive: true });
      writeFileSync(path.join(dir, 'gatehouse-20260301-100000.pglite.tar.gz'), Buffer.from([0, 1, 2, 3, 255]));
      writeFileSync(path.join(dir, 'site', 'site-20260302.tar.gz'), 'site archive');
      writeFileSync(path.join(dir, 'half.pgdump.partial'), 'incomplete');
      utimesSync(path.join(dir, 'gatehouse-20260301-100000.pglite.tar.gz'), new Date('2026-03-01T10:00:00Z'), new Date('2026-03-01T10:00:00Z'));
      utimesSync(path.join(dir, 'site', 'site-20260302.tar.gz'), new Date('2026-03-02T08:30:15Z'), new Date('2026-03-02T08:30:15Z'));
      outside = mkdtempSync(path.join(os.tmpdir(), 'gh-mgmt-outside-'));
      writeFileSync(path.join(outside, 'secret.txt'), 'OUTSIDE-SECRET');
      symlinkSync(path.join(outside, 'secret.txt'), path.join(dir, 'link-out'));
      symlinkSync(outside, path.join(dir, 'dir-out'));
      symlinkSync(path.join(dir, 'site', 'site-20260302.tar.gz'), path.join(dir, 'link-in'));
      writeFileSync(path.join(dataDir, 'x'), 'DATA-DIR-FILE');
    });
    afterAll(() => rmSync(outside, { recursive: true, force: true }));

    it('backups/list gives the regular files with size and date, newest first; links and partial dumps are not listed', async () => {
      const res = await get('backups/list');
      expect(res.json).toEqual({
        api_version: '1.0',
        success_message: '',
        data: {
          files: [
            { path: 'site/site-20260302.tar.gz', size_bytes: 12, modified_time: '2026-03-02 08:30:15' },
            { path: 'gatehouse-20260301-100000.pglite.tar.gz', size_bytes: 5, modified_time: '2026-03-01 10:00:00' },
          ],
          count: 2,
          total_bytes: 17,
        },
      });
    });

    it('backups/fetch streams the file as application/octet-stream with no envelope', async () => {
      const res = await fetchPath('gatehouse-20260301-100000.pglite.tar.gz');
      expect(res.statusCode).toBe(200);
      expect(res.headers['content-type']).toBe('application/octet-stream');
      expect(res.headers['content-length']).toBe('5');
      expect(res.headers['content-disposition']).toBe('attachment; filename="gatehouse-20260301-100000.pglite.tar.gz"');
      expect(res.headers['x-content-type-options']).toBe('nosniff');
      expect([...res.rawPayload]).toEqual([0, 1, 2, 3, 255]);
      const nested = await fetchPath('site/site-20260302.tar.gz');
      expect(nested.body).toBe('site archive');
      // A link whose target stays inside the directory is followed.
      expect((await fetchPath('link-in')).body).toBe('site archive');
    });

    const refused: Array<[string, string, number, string]> = [
      ['dot-dot', '../x', 400, "path must not contain '..'"],
      ['encoded slash', '..%2Fx', 400, "path must not contain '..'"],
      ['encoded dots', '%2e%2e/x', 400, "path must not contain '..'"],
      ['encoded dots and slash', '%2e%2e%2fx', 400, "path must not contain '..'"],
      ['absolute', '/etc/passwd', 400, 'path must be relative to the backups directory'],
      ['encoded absolute', '%2Fetc%2Fpasswd', 400, 'path must be relative to the backups directory'],
      ['up from a subfolder', 'sub/../../x', 400, "path must not contain '..'"],
      ['dot-dot inside', 'site/../gatehouse-20260301-100000.pglite.tar.gz', 400, "path must not contain '..'"],
      ['backslash', '..%5Cx', 400, 'path must be relative to the backups directory'],
      ['symlink to a file outside', 'link-out', 400, 'path must lie inside the backups directory'],
      ['through a symlinked folder outside', 'dir-out/secret.txt', 400, 'path must lie inside the backups directory'],
      ['a directory', 'site', 400, 'path must name a file, not a directory'],
      ['the directory itself', '.', 400, 'path must lie inside the backups directory'],
      ['empty', '', 400, 'path is required: a file name from backups/list'],
      ['NUL byte', 'gatehouse-20260301-100000.pglite.tar.gz%00.txt', 400, 'Input validation failed: path must not contain a NUL character (\\u0000)'],
      ['repeated', 'a&path=b', 400, 'path is required: a file name from backups/list'],
      ['double-encoded dots stay a literal, missing name', '%252e%252e%252fx', 404, 'No such backup file'],
      ['missing file', 'nope.tar.gz', 404, 'No such backup file'],
      ['missing folder', 'nope/x.tar.gz', 404, 'No such backup file'],
    ];
    for (const [name, p, status, error] of refused) {
      it(`backups/fetch refuses ${name} (${p})`, async () => {
        const res = await fetchPath(p);
        expect(res.statusCode).toBe(status);
        expect(res.json).toEqual({ api_version: '1.0', errortype: status === 404 ? 'NotFound' : 'TransactionError', error, data: {} });
        expect(res.body).not.toContain('OUTSIDE-SECRET');
        expect(res.body).not.toContain('DATA-DIR-FILE');
      });
    }

    it('backups/fetch without a path is refused', async () => {
      const res = await get('backups/fetch');
      expect(res.statusCode).toBe(400);
      expect(res.json.error).toBe('path is required: a file name from backups/list');
    });
  });
});

describe('management: backups directory absent', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp({ config: { dataDir: path.join(os.tmpdir(), `gh-mgmt-none-${process.pid}`, 'data') } });
  });
  afterAll(async () => t.close());

  it('lists no files and fetches nothing, and stats still reports the disk of the nearest existing folder', async () => {
    const { headers } = await t.keyHeaders({ userPermission: 10 });
    const list = await t.request({ method: 'GET', url: url('backups/list'), headers });
    expect(list.json.data).toEqual({ files: [], count: 0, total_bytes: 0 });
    const fetch = await t.request({ method: 'GET', url: `${url('backups/fetch')}?path=x`, headers });
    expect(fetch.statusCode).toBe(404);
    const stats = await t.request({ method: 'GET', url: url('stats'), headers });
    expect(stats.json.data.disk.total_bytes).toBeGreaterThan(0);
  });
});

describe('management: tier feature coverage', () => {
  it('tiers/audit lists, for every active tier, exactly the declared keys it has no explicit value for', async () => {
    const { createTier } = await import('../helpers/tiers.js');
    const t = await createTestApp();
    try {
      const { headers } = await t.keyHeaders({ userPermission: 10 });
      await createTier(t, { name: 'silver', level: 10, features: { drive_storage_bytes: 1000, drive_share_links: true } });
      await createTier(t, { name: 'retired', level: 5, active: false });
      const res = await t.request({ method: 'GET', url: '/api/v1/management/tiers/audit', headers });
      expect(res.statusCode).toBe(200);
      const declared = t.services.tiers.registry.keys().sort();
      expect(res.json.data.declared_features).toEqual(declared);
      expect(res.json.data.tiers).toEqual([
        { name: 'silver', tier_level: 10, missing: declared.filter((k: string) => k !== 'drive_storage_bytes' && k !== 'drive_share_links') },
      ]);
      const list = await t.request({ method: 'GET', url: '/api/v1/management', headers });
      expect(JSON.stringify(list.json.data)).toContain('tiers/audit');
    } finally {
      await t.close();
    }
  });
});
