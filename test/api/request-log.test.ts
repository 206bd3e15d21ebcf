import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RequestLog, type CopyRows, type RequestLogEntry } from '../../src/http/request-log.js';
import { createTestApp, type TestApp } from '../helpers/app.js';

const START = new Date('2026-03-01T12:00:00Z');
const DAY_MS = 86_400_000;

describe('request log record', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp({ start: START });
  });
  afterAll(async () => t.close());

  async function rowsFrom(ip: string) {
    await t.services.requestLog.flush();
    return t.services.db.selectFrom('rql_request_logs').selectAll().where('rql_ip_address', '=', ip).orderBy('rql_request_log_id').execute();
  }

  function expectWholeMilliseconds(rows: { rql_response_ms: number | null }[]) {
    for (const r of rows) {
      expect(Number.isInteger(r.rql_response_ms)).toBe(true);
      expect(r.rql_response_ms).toBeGreaterThanOrEqual(0);
    }
  }

  it('logs an unauthenticated 404 with feature, IP, failure, status and error type, and no user or key type', async () => {
    const ip = '192.0.2.1';
    await t.request({ method: 'GET', url: '/api/v1/no/such/endpoint/here', remoteAddress: ip });
    const rows = await rowsFrom(ip);
    expect(rows).toHaveLength(1);
    expect(rows[0]).toMatchObject({
      rql_feature: 'unknown',
      rql_action: null,
      rql_ip_address: ip,
      rql_usr_user_id: null,
      rql_api_key_type: null,
      rql_was_success: false,
      rql_status_code: 404,
      rql_error_type: 'NotFound',
      rql_note: null,
      rql_create_time: START,
    });
    expectWholeMilliseconds(rows);
  });

  // A path that names no class (one segment, or a class's item path with a wrong case) never reaches a
  // CRUD handler: it is the API's not-found answer, logged like any other unknown path.
  it.each([
    ['/api/v1/nope', '192.0.2.11'],
    ['/api/v1/post/1', '192.0.2.12'],
    ['/api/v1/Nopes', '192.0.2.13'],
  ])('logs GET %s (no such class) as an unknown-feature 404 NotFound', async (url, ip) => {
    const res = await t.request({ method: 'GET', url, remoteAddress: ip });
    expect(res.statusCode).toBe(404);
    expect(res.json).toEqual({ api_version: '1.0', errortype: 'NotFound', error: `No API endpoint GET ${url}`, data: {} });
    const rows = await rowsFrom(ip);
    expect(rows).toHaveLength(1);
    expect(rows[0]).toMatchObject({ rql_feature: 'unknown', rql_action: null, rql_was_success: false, rql_status_code: 404, rql_error_type: 'NotFound' });
  });

  it("logs a machine key's session read with the user id and key type 'machine'", async () => {
    const ip = '192.0.2.2';
    const { headers, userId } = await t.keyHeaders();
    const res = await t.request({ method: 'GET', url: '/api/v1/auth/session', headers, remoteAddress: ip });
    expect(res.statusCode).toBe(200);
    const rows = await rowsFrom(ip);
    expect(rows).toHaveLength(1);
    expect(rows[0]).toMatchObject({
      rql_feature: 'auth',
      rql_action: 'session',
      rql_ip_address: ip,
      rql_usr_user_id: userId,
      rql_api_key_type: 'machine',
      rql_was_success: true,
      rql_status_code: 200,
      rql_error_type: null,
    });
    expectWholeMilliseconds(rows);
  });

  it("logs a login session key's session read with key type 'session'", async () => {
    const ip = '192.0.2.3';
    const { userId, email, password } = await t.createUser();
    const res = await t.request({ method: 'POST', url: '/api/v1/auth/login', payload: { email, password }, remoteAddress: ip });
    expect(res.statusCode).toBe(200);
    const headers = { public_key: res.json.data.public_key, secret_key: res.json.data.secret_key };
    expect((await t.request({ method: 'GET', url: '/api/v1/auth/session', headers, remoteAddress: ip })).statusCode).toBe(200);
    const rows = await rowsFrom(ip);
    expect(rows.map((r) => [r.rql_feature, r.rql_action, r.rql_status_code, r.rql_was_success])).toEqual([
      ['auth', 'login', 200, true],
      ['auth', 'session', 200, true],
    ]);
    expect(rows[0]!.rql_api_key_type).toBeNull();
    expect(rows[1]).toMatchObject({ rql_usr_user_id: userId, rql_api_key_type: 'session', rql_error_type: null });
  });

  it('logs a failed authentication as a failure with the error type and no key type', async () => {
    const ip = '192.0.2.4';
    const { key } = await t.keyHeaders();
    const res = await t.request({
      method: 'GET',
      url: '/api/v1/auth/session',
      headers: { public_key: key.publicKey, secret_key: 'not-the-secret' },
      remoteAddress: ip,
    });
    expect(res.statusCode).toBe(401);
    const rows = await rowsFrom(ip);
    expect(rows).toHaveLength(1);
    expect(rows[0]).toMatchObject({
      rql_feature: 'auth',
      rql_action: null,
      rql_usr_user_id: null,
      rql_api_key_type: null,
      rql_was_success: false,
      rql_status_code: 401,
      rql_error_type: 'AuthenticationError',
    });
  });

  it('logs a failed login as a 401 AuthenticationError', async () => {
    const ip = '192.0.2.5';
    const { email } = await t.createUser();
    await t.request({ method: 'POST', url: '/api/v1/auth/login', payload: { email, password: 'wrong-password' }, remoteAddress: ip });
    const rows = await rowsFrom(ip);
    expect(rows).toHaveLength(1);
    expect(rows[0]).toMatchObject({ rql_action: 'login', rql_status_code: 401, rql_was_success: false, rql_error_type: 'AuthenticationError' });
  });

  it('never logs secret keys, passwords or request bodies', async () => {
    const ip = '192.0.2.6';
    const password = 'Password-Canary-7f3a';
    const { email, userId } = await t.createUser({ password });
    const login = await t.request({ method: 'POST', url: '/api/v1/auth/login', payload: { email, password, device_label: 'Body-Canary-Label' }, remoteAddress: ip });
    expect(login.statusCode).toBe(200);
    const sessionSecret: string = login.json.data.secret_key;
    const machine = await t.createMachineKey({ userId });
    const machineHeaders = { public_key: machine.publicKey, secret_key: machine.secretKey };
    await t.request({ method: 'GET', url: '/api/v1/auth/session', headers: { public_key: login.json.data.public_key, secret_key: sessionSecret }, remoteAddress: ip });
    await t.request({ method: 'GET', url: '/api/v1/auth/session', headers: machineHeaders, remoteAddress: ip });
    await t.request({ method: 'GET', url: `/api/v1/nope?secret_key=${machine.secretKey}`, headers: machineHeaders, remoteAddress: ip });
    await t.request({ method: 'POST', url: '/api/v1/auth/login', payload: { email, password: 'Wrong-Canary-Password' }, remoteAddress: ip });
    const rows = await rowsFrom(ip);
    expect(rows).toHaveLength(5);
    const logged = JSON.stringify(rows);
    for (const canary of [password, 'Wrong-Canary-Password', sessionSecret, machine.secretKey, 'Body-Canary-Label', email]) {
      expect(logged, canary).not.toContain(canary);
    }
  });

  it('logs a rate-limited request as a 429 RateLimitError', async () => {
    await t.services.settings.set('api_rate_limit_requests', 1);
    try {
      const ip = '192.0.2.7';
      await t.request({ method: 'GET', url: '/api/v1/nope', remoteAddress: ip });
      await t.request({ method: 'GET', url: '/api/v1/nope', remoteAddress: ip });
      const rows = await rowsFrom(ip);
      expect(rows.map((r) => [r.rql_status_code, r.rql_error_type, r.rql_was_success])).toEqual([
        [404, 'NotFound', false],
        [429, 'RateLimitError', false],
      ]);
    } finally {
      await t.services.settings.set('api_rate_limit_requests', 1000);
    }
  });
});

describe('request log retention', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp({ start: START });
  });
  afterAll(async () => t.close());

  async function times(): Promise<string[]> {
    const rows = await t.services.db.selectFrom('rql_request_logs').select('rql_create_time').orderBy('rql_create_time').execute();
    return rows.map((r) => r.rql_create_time.toISOString());
  }

  it('purge_request_logs deletes rows older than api_request_log_retention_days and keeps newer ones, recording the run', async () => {
    expect(t.services.settings.int('api_request_log_retention_days')).toBe(90); // the contract's default
    await t.services.settings.set('api_request_log_retention_days', 30);
    await t.request({ method: 'GET', url: '/api/v1/nope' }); // day 0
    t.clock.advance(10 * DAY_MS);
    await t.request({ method: 'GET', url: '/api/v1/nope' }); // day 10
    t.clock.advance(20 * DAY_MS);
    await t.request({ method: 'GET', url: '/api/v1/nope' }); // day 30
    await t.services.requestLog.flush();
    t.clock.advance(DAY_MS + 1000); // day 31 + 1 s: only the day-0 row is more than 30 days old

    const outcome = await t.services.scheduler.runNow('purge_request_logs');
    expect(outcome).toEqual([{ task: 'purge_request_logs', result: { deleted: 1, retention_days: 30 } }]);
    expect(await times()).toEqual([new Date(START.getTime() + 10 * DAY_MS).toISOString(), new Date(START.getTime() + 30 * DAY_MS).toISOString()]);

    const run = await t.services.db.selectFrom('tsk_task_runs').selectAll().where('tsk_name', '=', 'purge_request_logs').executeTakeFirstOrThrow();
    const now = t.clock.now();
    expect(run).toEqual({
      tsk_name: 'purge_request_logs',
      tsk_last_start_time: now,
      tsk_last_end_time: now,
      tsk_last_outcome: 'success',
      tsk_last_error: null,
      tsk_last_result: { deleted: 1, retention_days: 30 },
      tsk_run_count: 1,
    });
  });

  it('keeps a row exactly at the retention cutoff', async () => {
    t.clock.set(new Date(START.getTime() + 40 * DAY_MS)); // the day-10 row is exactly 30 days old
    expect(await t.services.scheduler.runNow('purge_request_logs')).toEqual([{ task: 'purge_request_logs', result: { deleted: 0, retention_days: 30 } }]);
    expect(await times()).toHaveLength(2);
    const run = await t.services.db.selectFrom('tsk_task_runs').select('tsk_run_count').where('tsk_name', '=', 'purge_request_logs').executeTakeFirstOrThrow();
    expect(run.tsk_run_count).toBe(2);
  });

  it('applies a changed retention at the next run', async () => {
    await t.services.settings.set('api_request_log_retention_days', 90);
    t.clock.set(new Date(START.getTime() + 120 * DAY_MS + 1000)); // the day-30 row is 90 days and 1 s old
    expect(await t.services.scheduler.runNow('purge_request_logs')).toEqual([{ task: 'purge_request_logs', result: { deleted: 2, retention_days: 90 } }]);
    expect(await times()).toEqual([]);
  });
});

describe('request log buffer (COPY on either database)', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp({ start: START });
  });
  afterAll(async () => t.close());
  const copyRows: CopyRows = (table, columns, text) => t.services.database.copyRows(table, columns, text);

  const entry = (ip: string, status = 200): RequestLogEntry => ({
    feature: 'auth',
    action: 'session',
    ip,
    userId: null,
    keyType: null,
    success: status < 400,
    status,
    errorType: null,
    responseMs: 1.4,
    at: START,
  });

  const countFrom = async (ip: string) =>
    Number((await t.services.db.selectFrom('rql_request_logs').select((eb) => eb.fn.countAll().as('n')).where('rql_ip_address', '=', ip).executeTakeFirstOrThrow()).n);

  it('holds at most 10,000 unwritten entries and counts the ones it drops', async () => {
    const log = new RequestLog(copyRows, { batchSize: 1_000_000 });
    for (let i = 0; i < 10_005; i++) log.add(entry('198.51.100.1'));
    expect(log.dropped).toBe(5);
    await log.flush();
    expect(await countFrom('198.51.100.1')).toBe(10_000);
  });

  it('writes every field of an entry as given', async () => {
    const log = new RequestLog(copyRows);
    const at = new Date('2026-05-04T03:02:01.456Z');
    log.add({ feature: 'crud', action: 'Post:read', ip: '2001:db8::7', userId: 42, keyType: 'session', success: false, status: 403, errorType: 'AuthenticationError', responseMs: 12.6, at });
    await log.flush();
    const row = await t.services.db
      .selectFrom('rql_request_logs')
      .select(['rql_feature', 'rql_action', 'rql_ip_address', 'rql_usr_user_id', 'rql_api_key_type', 'rql_was_success', 'rql_status_code', 'rql_error_type', 'rql_response_ms', 'rql_create_time', 'rql_note'])
      .where('rql_ip_address', '=', '2001:db8::7')
      .executeTakeFirstOrThrow();
    expect(row).toEqual({
      rql_feature: 'crud',
      rql_action: 'Post:read',
      rql_ip_address: '2001:db8::7',
      rql_usr_user_id: 42,
      rql_api_key_type: 'session',
      rql_was_success: false,
      rql_status_code: 403,
      rql_error_type: 'AuthenticationError',
      rql_response_ms: 13,
      rql_create_time: at,
      rql_note: null,
    });
  });

  it('keeps text exactly as given, whatever characters it holds', async () => {
    const log = new RequestLog(copyRows);
    const awkward = ['NULL', 'a,"b"{c}\\d', "it's", ' spaced ', 'ünïcödé', ''];
    for (const action of awkward) log.add({ ...entry('198.51.100.6'), action, feature: action, errorType: action });
    log.add({ ...entry('198.51.100.6'), action: null, errorType: null });
    await log.flush();
    const rows = await t.services.db
      .selectFrom('rql_request_logs')
      .select(['rql_feature', 'rql_action', 'rql_error_type'])
      .where('rql_ip_address', '=', '198.51.100.6')
      .orderBy('rql_request_log_id')
      .execute();
    expect(rows).toEqual([
      ...awkward.map((v) => ({ rql_feature: v, rql_action: v, rql_error_type: v })),
      { rql_feature: 'auth', rql_action: null, rql_error_type: null },
    ]);
  });

  it('copyRows refuses a table or column that is not a plain identifier, before reaching the database', async () => {
    await expect(t.services.database.copyRows('rql_request_logs; drop table x', ['rql_feature'], 'a\n')).rejects.toThrow('not a plain identifier');
    await expect(t.services.database.copyRows('rql_request_logs', ['rql_feature) from program (id'], 'a\n')).rejects.toThrow('not a plain identifier');
  });

  it('reports a failed write to onError and keeps writing later entries', async () => {
    const errors: unknown[] = [];
    const log = new RequestLog(copyRows, { onError: (e) => errors.push(e) });
    log.add(entry('198.51.100.4', 70_000)); // out of range for the int2 status column
    await log.flush();
    expect(errors).toHaveLength(1);
    log.add(entry('198.51.100.5'));
    await log.flush();
    expect(await countFrom('198.51.100.5')).toBe(1);
  });
});
