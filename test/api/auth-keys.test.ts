import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { revokeKey, revokeSessionKeysOf } from '../../src/accounts/api-keys.js';
import { hashSecret } from '../../src/accounts/passwords.js';
import { requireCapability, type Capability } from '../../src/accounts/auth/capabilities.js';
import { success } from '../../src/http/envelope.js';
import { createTestApp, type TestApp } from '../helpers/app.js';

const SESSION = '/api/v1/auth/session';

function probeRoutes(api: import('fastify').FastifyInstance) {
  for (const cap of ['read', 'write', 'delete'] as Capability[]) {
    api.get(`/__probe/${cap}`, async (request) => {
      requireCapability(request.principal!, cap);
      return success({ capability: cap, credential: request.principal!.credential });
    });
  }
}

describe('machine keys: the authentication stage', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp({ extraApiRoutes: probeRoutes, config: { trustProxy: ['10.0.0.1'] } });
  });
  afterAll(async () => t.close());

  const get = (headers: Record<string, string>, extra: Record<string, unknown> = {}) =>
    t.request({ method: 'GET', url: SESSION, headers, ...extra });

  it('authenticates a valid machine key and reports the user summary', async () => {
    const { userId, email } = await t.createUser({ permission: 5, firstName: 'Ada', lastName: 'Lovelace' });
    const key = await t.createMachineKey({ userId, permission: 3 });
    const res = await get({ public_key: key.publicKey, secret_key: key.secretKey });
    expect(res.statusCode).toBe(200);
    expect(res.json).toEqual({
      api_version: '1.0',
      success_message: 'Session found.',
      data: { user_id: userId, display_name: 'Ada Lovelace', email, permission: 5, tier: null },
    });
  });

  it('reads the key headers in any letter case', async () => {
    const { key } = await t.keyHeaders();
    const res = await get({ Public_Key: key.publicKey, SECRET_KEY: key.secretKey });
    expect(res.statusCode).toBe(200);
  });

  it('gives 400 AuthenticationError for missing headers, a missing secret and an unknown key', async () => {
    const { key } = await t.keyHeaders();
    const cases: Record<string, string>[] = [{}, { public_key: key.publicKey }, { secret_key: key.secretKey }, { public_key: "key_unknown", secret_key: key.secretKey }];
    for (const headers of cases) {
      const res = await get(headers, { remoteAddress: `198.51.100.${Math.floor(Math.random() * 200)}` });
      expect(res.statusCode, JSON.stringify(headers)).toBe(400);
      expect(res.json).toMatchObject({ api_version: '1.0', errortype: 'AuthenticationError', data: {} });
    }
  });

  it('gives 401 for a wrong secret', async () => {
    const { key } = await t.keyHeaders();
    const res = await get({ public_key: key.publicKey, secret_key: 'f'.repeat(64) });
    expect(res.statusCode).toBe(401);
    expect(res.json.errortype).toBe('AuthenticationError');
  });

  it('gives 401 for a session key with a wrong secret', async () => {
    const { email, password } = await t.createUser();
    const { headers } = await t.login(email, password);
    const res = await get({ public_key: headers.public_key!, secret_key: 'f'.repeat(64) }, { remoteAddress: '203.0.113.80' });
    expect(res.statusCode).toBe(401);
    expect(res.json).toEqual({ api_version: '1.0', errortype: 'AuthenticationError', error: 'Invalid API credentials', data: {} });
    expect((await get(headers)).statusCode).toBe(200);
  });

  it('does not reveal a key\'s state to a caller without its secret: every state answers like a wrong secret', async () => {
    const { userId } = await t.createUser();
    const now = t.clock.now();
    const active = await t.createMachineKey({ userId });
    const inactive = await t.createMachineKey({ userId, active: false });
    const revoked = await t.createMachineKey({ userId });
    await revokeKey(t.services.db, revoked.apiKeyId, now);
    const future = await t.createMachineKey({ userId, startTime: new Date(now.getTime() + 3600_000) });
    const expired = await t.createMachineKey({ userId, expiresTime: new Date(now.getTime() - 1000) });
    const elsewhere = await t.createMachineKey({ userId, ipRestriction: '192.0.2.250' });
    const gone = await t.createUser();
    const ofDeletedUser = await t.createMachineKey({ userId: gone.userId });
    await t.services.db.updateTable('usr_users').set({ usr_delete_time: now }).where('usr_user_id', '=', gone.userId).execute();
    const { email, password } = await t.createUser();
    const session = await t.login(email, password);
    await t.request({ method: 'POST', url: '/api/v1/auth/logout', headers: session.headers });

    const wrong = 'a'.repeat(64);
    const ip = { remoteAddress: '203.0.113.90' };
    const reference = await get({ public_key: active.publicKey, secret_key: wrong }, ip);
    expect(reference.statusCode).toBe(401);
    expect(reference.json).toEqual({ api_version: '1.0', errortype: 'AuthenticationError', error: 'Invalid API credentials', data: {} });
    const keys = { inactive, revoked, future, expired, elsewhere, ofDeletedUser, loggedOutSession: { publicKey: session.headers.public_key! } };
    for (const [name, key] of Object.entries(keys)) {
      const res = await get({ public_key: key.publicKey, secret_key: wrong }, { remoteAddress: `203.0.113.${91 + Object.keys(keys).indexOf(name)}` });
      expect(res.statusCode, name).toBe(401);
      expect(res.body, name).toBe(reference.body);
    }
  });

  it('gives 401 for inactive, revoked, not-yet-started and expired keys once the secret is right', async () => {
    const { userId } = await t.createUser();
    const now = t.clock.now();
    const inactive = await t.createMachineKey({ userId, active: false });
    const revoked = await t.createMachineKey({ userId });
    await revokeKey(t.services.db, revoked.apiKeyId, now);
    const future = await t.createMachineKey({ userId, startTime: new Date(now.getTime() + 3600_000) });
    const expired = await t.createMachineKey({ userId, expiresTime: new Date(now.getTime() - 1000) });
    for (const [name, key] of Object.entries({ inactive, revoked, future, expired })) {
      const res = await get({ public_key: key.publicKey, secret_key: key.secretKey }, { remoteAddress: '203.0.113.77' });
      expect(res.statusCode, name).toBe(401);
      expect(res.json.errortype, name).toBe('AuthenticationError');
    }
  });

  it('honours start and expiry times as the clock moves', async () => {
    const { userId } = await t.createUser();
    const start = new Date(t.clock.nowMs() + 60_000);
    const key = await t.createMachineKey({ userId, startTime: start, expiresTime: new Date(start.getTime() + 60_000) });
    const headers = { public_key: key.publicKey, secret_key: key.secretKey };
    const ip = { remoteAddress: '203.0.113.78' };
    expect((await get(headers, ip)).statusCode).toBe(401);
    t.clock.advanceSeconds(60);
    expect((await get(headers, ip)).statusCode).toBe(200);
    t.clock.advanceSeconds(60);
    expect((await get(headers, ip)).statusCode).toBe(401);
  });

  it('gives 400 for a key whose user was deleted (after the secret is verified)', async () => {
    const { userId } = await t.createUser();
    const key = await t.createMachineKey({ userId });
    await t.services.db.updateTable('usr_users').set({ usr_delete_time: t.clock.now() }).where('usr_user_id', '=', userId).execute();
    const res = await get({ public_key: key.publicKey, secret_key: key.secretKey });
    expect(res.statusCode).toBe(400);
    expect(res.json.errortype).toBe('AuthenticationError');
  });

  it('admits only listed addresses for an IP-restricted machine key, through a trusted proxy or the socket', async () => {
    const { userId } = await t.createUser();
    const key = await t.createMachineKey({ userId, ipRestriction: '192.0.2.5, 192.0.2.6' });
    const headers = { public_key: key.publicKey, secret_key: key.secretKey };
    expect((await get(headers, { remoteAddress: '192.0.2.5' })).statusCode).toBe(200);
    expect((await get({ ...headers, 'x-forwarded-for': '192.0.2.6' }, { remoteAddress: '10.0.0.1' })).statusCode).toBe(200);
    const denied = await get(headers, { remoteAddress: '192.0.2.7' });
    expect(denied.statusCode).toBe(401);
    expect(denied.json.errortype).toBe('AuthenticationError');
    // A forged X-Forwarded-For from an untrusted address is not believed.
    expect((await get({ ...headers, 'x-forwarded-for': '192.0.2.5' }, { remoteAddress: '192.0.2.99' })).statusCode).toBe(401);
  });

  it('refreshes last_used_time at most once per hour', async () => {
    const { key } = await t.keyHeaders();
    const headers = { public_key: key.publicKey, secret_key: key.secretKey };
    const lastUsed = async () =>
      (await t.services.db.selectFrom('apk_api_keys').select('apk_last_used_time').where('apk_api_key_id', '=', key.apiKeyId).executeTakeFirstOrThrow()).apk_last_used_time;
    expect(await lastUsed()).toBeNull();
    await get(headers);
    const first = await lastUsed();
    expect(first?.getTime()).toBe(t.clock.nowMs());
    t.clock.advanceSeconds(1800);
    await get(headers);
    await get(headers);
    expect((await lastUsed())?.getTime()).toBe(first?.getTime());
    t.clock.advanceSeconds(1800);
    await get(headers);
    expect((await lastUsed())?.getTime()).toBe(t.clock.nowMs());
  });

  it('lets no revoked, deactivated, expired or IP-moved key through the verification cache', async () => {
    const { key } = await t.keyHeaders();
    const headers = { public_key: key.publicKey, secret_key: key.secretKey };
    const row = () => t.services.db.updateTable('apk_api_keys').where('apk_api_key_id', '=', key.apiKeyId);
    const storedHash = async () =>
      (await t.services.db.selectFrom('apk_api_keys').select('apk_secret_hash').where('apk_api_key_id', '=', key.apiKeyId).executeTakeFirstOrThrow()).apk_secret_hash;
    expect((await get(headers)).statusCode).toBe(200);
    // The successful verification is remembered, so the next request does not pay the slow hash.
    expect(t.services.keyVerifications.has(key.apiKeyId, key.secretKey, await storedHash(), t.clock.nowMs())).toBe(true);
    expect((await get(headers)).statusCode).toBe(200);

    await row().set({ apk_is_active: false }).execute();
    expect((await get(headers)).statusCode).toBe(401);
    await row().set({ apk_is_active: true }).execute();
    expect((await get(headers)).statusCode).toBe(200);

    await row().set({ apk_expires_time: t.clock.now() }).execute();
    expect((await get(headers)).statusCode).toBe(401);
    await row().set({ apk_expires_time: null }).execute();

    await row().set({ apk_ip_restriction: '192.0.2.200' }).execute();
    expect((await get(headers, { remoteAddress: '192.0.2.201' })).statusCode).toBe(401);
    expect((await get(headers, { remoteAddress: '192.0.2.200' })).statusCode).toBe(200);
    await row().set({ apk_ip_restriction: null }).execute();

    await revokeKey(t.services.db, key.apiKeyId, t.clock.now());
    expect((await get(headers)).statusCode).toBe(401);
  });

  it('does not honour a remembered verification once the key\'s secret is replaced', async () => {
    const { key } = await t.keyHeaders();
    const headers = { public_key: key.publicKey, secret_key: key.secretKey };
    expect((await get(headers)).statusCode).toBe(200);
    const rotated = 'b'.repeat(64);
    await t.services.db.updateTable('apk_api_keys').set({ apk_secret_hash: await hashSecret(rotated) }).where('apk_api_key_id', '=', key.apiKeyId).execute();
    const old = await get(headers, { remoteAddress: '203.0.113.120' });
    expect(old.statusCode).toBe(401);
    expect(old.json.error).toBe('Invalid API credentials');
    expect((await get({ public_key: key.publicKey, secret_key: rotated })).statusCode).toBe(200);
  });

  describe('capabilities: the non-monotonic matrix', () => {
    const matrix: Record<number, Record<Capability, boolean>> = {
      1: { read: true, write: false, delete: false },
      2: { read: false, write: true, delete: false },
      3: { read: true, write: true, delete: false },
      4: { read: true, write: true, delete: true },
    };
    for (const permission of [1, 2, 3, 4]) {
      for (const cap of ['read', 'write', 'delete'] as Capability[]) {
        const allowed = matrix[permission]![cap];
        it(`apk_permission ${permission} ${allowed ? 'may' : 'may not'} ${cap}`, async () => {
          const { headers } = await t.keyHeaders({ permission });
          const res = await t.request({ method: 'GET', url: `/api/v1/__probe/${cap}`, headers });
          if (allowed) {
            expect(res.statusCode).toBe(200);
          } else {
            expect(res.statusCode).toBe(403);
            expect(res.json.errortype).toBe('AuthenticationError');
          }
        });
      }
    }

    // Issue 22, item 9: the matrix starts at 1, whatever wrote the row. createMachineKey and the table's
    // check constraint refuse 0 today; the rule must not rest on them (an older or hand-edited database),
    // so the constraint is lifted while the row is written.
    for (const permission of [0, -1]) {
      it(`apk_permission ${permission} has no capability at all: not read, write or delete, on any surface`, async () => {
        const { headers, key } = await t.keyHeaders({ permission: 1 });
        const db = t.services.db;
        await sql`alter table apk_api_keys drop constraint apk_api_keys_apk_permission_check`.execute(db);
        try {
          await db.updateTable('apk_api_keys').set({ apk_permission: permission }).where('apk_api_key_id', '=', key.apiKeyId).execute();
          for (const cap of ['read', 'write', 'delete']) {
            const res = await t.request({ method: 'GET', url: `/api/v1/__probe/${cap}`, headers });
            expect(res.statusCode, cap).toBe(403);
            expect(res.json).toMatchObject({ errortype: 'AuthenticationError', error: `Insufficient permission: this key cannot ${cap}` });
          }
          // A world-readable CRUD listing is a read like any other.
          const list = await t.request({ method: 'GET', url: '/api/v1/Locations', headers });
          expect(list.statusCode).toBe(403);
          expect(list.json.errortype).toBe('AuthenticationError');
        } finally {
          await db.updateTable('apk_api_keys').set({ apk_permission: 1 }).where('apk_api_key_id', '=', key.apiKeyId).execute();
          await sql`alter table apk_api_keys add constraint apk_api_keys_apk_permission_check check (apk_permission between 1 and 4)`.execute(db);
        }
      });
    }

    it('a session key always has capability 4', async () => {
      const { email, password } = await t.createUser();
      const { headers } = await t.login(email, password);
      for (const cap of ['read', 'write', 'delete']) {
        const res = await t.request({ method: 'GET', url: `/api/v1/__probe/${cap}`, headers });
        expect(res.statusCode, cap).toBe(200);
        expect(res.json.data.credential).toBe('session');
      }
    });
  });
});

describe('session keys: login, session, logout', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp();
  });
  afterAll(async () => t.close());

  it('logs in with JSON and returns the contract keys, with expiry from api_session_key_lifetime_days', async () => {
    const { userId, email, password } = await t.createUser({ firstName: 'Grace', lastName: 'Hopper' });
    const res = await t.request({ method: 'POST', url: '/api/v1/auth/login', payload: { email, password, device_label: 'Pixel 9' } });
    expect(res.statusCode).toBe(200);
    const d = res.json.data;
    expect(Object.keys(d).sort()).toEqual(['expires_time', 'public_key', 'secret_key', 'user']);
    expect(d.public_key).toMatch(/^sess_[0-9a-f]{24}$/);
    expect(d.secret_key).toMatch(/^[0-9a-f]{64}$/);
    expect(d.expires_time).toBe('2027-03-01 12:00:00');
    expect(d.user).toEqual({ user_id: userId, display_name: 'Grace Hopper', email, permission: 0, tier: null });
    const row = await t.services.db.selectFrom('apk_api_keys').selectAll().where('apk_public_key', '=', d.public_key).executeTakeFirstOrThrow();
    expect(row.apk_type).toBe('session');
    expect(row.apk_name).toBe('Pixel 9');
    expect(row.apk_permission).toBe(4);
    expect(row.apk_secret_hash).not.toContain(d.secret_key);
  });

  it('accepts a form-encoded login body', async () => {
    const { email, password } = await t.createUser();
    const res = await t.request({
      method: 'POST',
      url: '/api/v1/auth/login',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      payload: new URLSearchParams({ email, password }).toString(),
    });
    expect(res.statusCode).toBe(200);
  });

  it('gives 400 AuthenticationError for missing login fields', async () => {
    for (const payload of [{}, { email: 'a@example.com' }, { password: 'x' }, { email: '', password: '' }]) {
      const res = await t.request({ method: 'POST', url: '/api/v1/auth/login', payload, remoteAddress: '198.51.100.50' });
      expect(res.statusCode).toBe(400);
      expect(res.json.errortype).toBe('AuthenticationError');
    }
  });

  it('answers unknown email, deleted user and wrong password with one identical 401', async () => {
    const { email, password } = await t.createUser();
    const gone = await t.createUser();
    await t.services.db.updateTable('usr_users').set({ usr_delete_time: t.clock.now() }).where('usr_user_id', '=', gone.userId).execute();
    const attempts = [
      { email: 'nobody@example.com', password },
      { email: gone.email, password: gone.password },
      { email, password: `${password}x` },
    ];
    const bodies = [];
    for (const payload of attempts) {
      const res = await t.request({ method: 'POST', url: '/api/v1/auth/login', payload, remoteAddress: '198.51.100.60' });
      expect(res.statusCode).toBe(401);
      bodies.push(res.body);
    }
    expect(new Set(bodies).size).toBe(1);
    expect(JSON.parse(bodies[0]!).errortype).toBe('AuthenticationError');
  });

  it('round-trips login, session and logout; logout revokes only the presented key', async () => {
    const { userId, email, password } = await t.createUser();
    const a = await t.login(email, password);
    const b = await t.login(email, password);
    const session = await t.request({ method: 'GET', url: SESSION, headers: a.headers });
    expect(session.statusCode).toBe(200);
    expect(session.json.data.user_id).toBe(userId);
    const out = await t.request({ method: 'POST', url: '/api/v1/auth/logout', headers: a.headers });
    expect(out.statusCode).toBe(200);
    expect(out.json.api_version).toBe('1.0');
    const after = await t.request({ method: 'GET', url: SESSION, headers: a.headers });
    expect(after.statusCode).toBe(401);
    expect(after.json.errortype).toBe('AuthenticationError');
    expect((await t.request({ method: 'GET', url: SESSION, headers: b.headers })).statusCode).toBe(200);
  });

  it('refuses logout with a machine key: 403', async () => {
    const { headers } = await t.keyHeaders();
    const res = await t.request({ method: 'POST', url: '/api/v1/auth/logout', headers });
    expect(res.statusCode).toBe(403);
    expect(res.json.errortype).toBe('AuthenticationError');
    expect((await t.request({ method: 'GET', url: SESSION, headers })).statusCode).toBe(200);
  });

  it('a session key expires after its lifetime', async () => {
    const { email, password } = await t.createUser();
    const { headers } = await t.login(email, password);
    t.clock.advanceSeconds(365 * 86400);
    const res = await t.request({ method: 'GET', url: SESSION, headers });
    expect(res.statusCode).toBe(401);
    t.clock.advanceSeconds(-365 * 86400);
  });

  it('a password change revokes every session key of the owner and leaves machine keys alone', async () => {
    const { userId, email, password } = await t.createUser();
    const s1 = await t.login(email, password);
    const s2 = await t.login(email, password);
    const machine = await t.createMachineKey({ userId });
    const other = await t.createUser();
    const otherSession = await t.login(other.email, other.password);
    const revoked = await revokeSessionKeysOf(t.services.db, userId, t.clock.now());
    expect(revoked).toBe(2);
    for (const h of [s1.headers, s2.headers]) expect((await t.request({ method: 'GET', url: SESSION, headers: h })).statusCode).toBe(401);
    expect((await t.request({ method: 'GET', url: SESSION, headers: { public_key: machine.publicKey, secret_key: machine.secretKey } })).statusCode).toBe(200);
    expect((await t.request({ method: 'GET', url: SESSION, headers: otherSession.headers })).statusCode).toBe(200);
  });
});

describe('the failed-auth limit', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp({ settings: { api_auth_rate_limit_requests: 3, api_auth_rate_limit_window: 900 } });
  });
  afterAll(async () => t.close());

  it('asks the rate-limit store once for a key-authenticated request: the general count and the failed-auth reading together', async () => {
    const { key } = await t.keyHeaders();
    const store = t.services.rateLimitStore;
    const calls = (['consume', 'peek', 'record', 'consumeAndPeek'] as const).map((m) => vi.spyOn(store, m));
    const res = await t.request({ method: 'GET', url: SESSION, headers: { public_key: key.publicKey, secret_key: key.secretKey }, remoteAddress: '192.0.2.40' });
    expect(res.statusCode).toBe(200);
    expect(calls.map((c) => c.mock.calls.length)).toEqual([0, 0, 0, 1]);
    for (const c of calls) c.mockRestore();
  });

  it('answers 429 after the allowed failures from one IP, counting bad secrets and bad logins, then recovers', async () => {
    const { key } = await t.keyHeaders();
    const { email, password } = await t.createUser();
    const ip = '192.0.2.33';
    expect((await t.request({ method: 'GET', url: SESSION, headers: { public_key: key.publicKey, secret_key: 'bad' }, remoteAddress: ip })).statusCode).toBe(401);
    t.clock.advanceSeconds(100);
    expect((await t.request({ method: 'POST', url: '/api/v1/auth/login', payload: { email, password: 'wrong-one' }, remoteAddress: ip })).statusCode).toBe(401);
    expect((await t.request({ method: 'POST', url: '/api/v1/auth/login', payload: { email, password: 'wrong-two' }, remoteAddress: ip })).statusCode).toBe(401);
    // Even the right credentials are refused while the window is full.
    const res = await t.request({ method: 'POST', url: '/api/v1/auth/login', payload: { email, password }, remoteAddress: ip });
    expect(res.statusCode).toBe(429);
    expect(res.json.errortype).toBe('RateLimitError');
    expect(res.json.data).toEqual({ limit: 3, window_seconds: 900, count: 3, retry_after_seconds: 800 });
    expect(res.headers['retry-after']).toBe('800');
    const keyed = await t.request({ method: 'GET', url: SESSION, headers: { public_key: key.publicKey, secret_key: key.secretKey }, remoteAddress: ip });
    expect(keyed.statusCode).toBe(429);
    // Another address is unaffected; successes are not counted.
    expect((await t.request({ method: 'POST', url: '/api/v1/auth/login', payload: { email, password }, remoteAddress: '192.0.2.34' })).statusCode).toBe(200);
    t.clock.advanceSeconds(800);
    expect((await t.request({ method: 'POST', url: '/api/v1/auth/login', payload: { email, password }, remoteAddress: ip })).statusCode).toBe(200);
  });
});
