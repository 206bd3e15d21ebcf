import { createCipheriv, createHash, createDecipheriv, createPublicKey, diffieHellman, generateKeyPairSync, hkdfSync, randomBytes, type KeyObject } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { revokeKey } from '../../src/accounts/api-keys.js';
import { formToken } from '../../src/accounts/web-sessions.js';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { signIn, webClient } from '../helpers/browser-session.js';

describe('POST /auth/web_session and the bridge', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp();
  });
  afterAll(async () => t.close());

  async function sessionKey() {
    const u = await t.createUser();
    return { ...u, ...(await t.login(u.email, u.password)) };
  }

  it('issues a bridge_url path and expires_in 60 to a session key', async () => {
    const { headers } = await sessionKey();
    const res = await t.request({ method: 'POST', url: '/api/v1/auth/web_session', headers, payload: { target: '/profile/subscription' } });
    expect(res.statusCode).toBe(200);
    expect(res.json.data).toEqual({ bridge_url: expect.stringMatching(/^\/auth\/bridge\/[0-9a-f]{64}$/), expires_in: 60 });
  });

  it('refuses machine keys and browser sessions with 403', async () => {
    const { headers } = await t.keyHeaders();
    const m = await t.request({ method: 'POST', url: '/api/v1/auth/web_session', headers, payload: {} });
    expect(m.statusCode).toBe(403);
    expect(m.json.errortype).toBe('AuthenticationError');
    const u = await t.createUser();
    const c = await signIn(t, u.email, u.password);
    const b = await c.api('POST', '/api/v1/auth/web_session', { payload: {} });
    expect(b.statusCode).toBe(403);
    expect(b.json.errortype).toBe('AuthenticationError');
  });

  const refused = ['https://evil.example.com/', '//evil.example.com', '/\\evil.example.com', '\\\\evil', 'profile', 'javascript:alert(1)', '/a\nb', '/a\u0000b', '/%2F%2Fevil.example.com', '/%5Cevil'];
  for (const target of refused) {
    it(`refuses target ${JSON.stringify(target)} with 400`, async () => {
      const { headers } = await sessionKey();
      const res = await t.request({ method: 'POST', url: '/api/v1/auth/web_session', headers, payload: { target } });
      expect(res.statusCode).toBe(400);
      expect(res.json.errortype).toBe('TransactionError');
    });
  }

  it('starts an app-context web session once, within 60 seconds, and redirects 302 to the target', async () => {
    const { userId, headers } = await sessionKey();
    const issued = await t.request({ method: 'POST', url: '/api/v1/auth/web_session', headers, payload: { target: '/profile/subscription?tab=1' } });
    // Only the token's hash is stored.
    const token = /([0-9a-f]{64})$/.exec(issued.json.data.bridge_url)![1]!;
    const stored = await t.services.db.selectFrom('wsb_web_session_bridges').select('wsb_token_hash').where('wsb_usr_user_id', '=', userId).executeTakeFirstOrThrow();
    expect(stored.wsb_token_hash).toBe(createHash('sha256').update(token).digest('hex'));
    const c = webClient(t);
    const first = await c.get(issued.json.data.bridge_url);
    expect(first.statusCode).toBe(302);
    expect(first.headers.location).toBe('/profile/subscription?tab=1');
    const who = await c.api('GET', '/api/v1/auth/session');
    expect(who.json.data.user_id).toBe(userId);
    const row = await t.services.db.selectFrom('wss_web_sessions').select('wss_context').where('wss_usr_user_id', '=', userId).where('wss_delete_time', 'is', null).executeTakeFirstOrThrow();
    expect(row.wss_context).toBe('app');
    const again = webClient(t);
    const second = await again.get(issued.json.data.bridge_url);
    expect(second.statusCode).toBe(410);
    // Nobody is signed in by it: the only session the answer carries is a guest's (every response mirrors one).
    const cookie = second.cookies.find((k) => k.name === 'gatehouse_session');
    if (cookie) expect((await t.services.webSessions.load(cookie.value))!.userId).toBeNull();
  });

  it('defaults the target to / and refuses a late use', async () => {
    const { headers } = await sessionKey();
    const issued = await t.request({ method: 'POST', url: '/api/v1/auth/web_session', headers, payload: {} });
    t.clock.advanceSeconds(61);
    const late = await webClient(t).get(issued.json.data.bridge_url);
    expect(late.statusCode).toBe(410);
    const fresh = await t.request({ method: 'POST', url: '/api/v1/auth/web_session', headers, payload: {} });
    const ok = await webClient(t).get(fresh.json.data.bridge_url);
    expect(ok.headers.location).toBe('/');
  });

  it('refuses the bridge when the session key was revoked in the meantime', async () => {
    const { headers } = await sessionKey();
    const issued = await t.request({ method: 'POST', url: '/api/v1/auth/web_session', headers, payload: {} });
    const key = await t.services.db.selectFrom('apk_api_keys').select('apk_api_key_id').where('apk_public_key', '=', headers.public_key!).executeTakeFirstOrThrow();
    await revokeKey(t.services.db, key.apk_api_key_id, t.clock.now());
    expect((await webClient(t).get(issued.json.data.bridge_url)).statusCode).toBe(410);
  });
});

describe('device link', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp({ config: { baseUrl: 'https://members.example.com' } });
  });
  afterAll(async () => t.close());

  const start = (payload: Record<string, unknown>, remoteAddress = '127.0.0.1') =>
    t.request({ method: 'POST', url: '/api/v1/auth/device_link', payload, remoteAddress });
  const poll = (token: string, remoteAddress = '127.0.0.1') => t.request({ method: 'GET', url: `/api/v1/auth/device_link/${token}`, remoteAddress });

  async function approveInBrowser(code: string, decision: 'approve' | 'deny') {
    const u = await t.createUser();
    const c = await signIn(t, u.email, u.password);
    const pageRes = await c.get(`/device?code=${encodeURIComponent(code)}`);
    expect(pageRes.statusCode).toBe(200);
    const session = (await t.services.webSessions.load(c.jar.cookies.get('gatehouse_session')))!;
    const res = await c.postForm('/device', { code, decision, form_token: formToken(session, 'device') });
    expect(res.statusCode).toBe(200);
    return { user: u, page: pageRes.body, result: res.body };
  }

  it('starts a ceremony without authentication and returns the contract keys', async () => {
    const res = await start({ device_name: "Ada's MacBook", platform: 'macos' });
    expect(res.statusCode).toBe(200);
    const d = res.json.data;
    expect(Object.keys(d).sort()).toEqual(['expires_time', 'link_code', 'poll_after', 'poll_token', 'verify_url']);
    expect(d.link_code).toMatch(/^[A-HJ-NP-Z2-9]{4}-[A-HJ-NP-Z2-9]{4}$/);
    expect(d.poll_token).toMatch(/^[0-9a-f]{64}$/);
    expect(d.verify_url).toBe(`https://members.example.com/device?code=${d.link_code}`);
    expect(d.expires_time).toBe('2026-03-01 12:10:00');
    expect(d.poll_after).toBe(3);
  });

  it('refuses bad input with 400 naming the field', async () => {
    for (const [payload, field] of [
      [{ platform: 'macos' }, 'device_name'],
      [{ device_name: 'x', platform: 'ios' }, 'platform'],
      [{ device_name: 'x', platform: 'linux', device_pubkey: 'not base64!' }, 'device_pubkey'],
      [{ device_name: 'x', platform: 'linux', device_pubkey: Buffer.alloc(16).toString('base64') }, 'device_pubkey'],
    ] as const) {
      const res = await start(payload);
      expect(res.statusCode).toBe(400);
      expect(res.json.errortype).toBe('TransactionError');
      expect(res.json.data.field).toBe(field);
    }
  });

  it('polls pending, then delivers a session key once after approval, then 409', async () => {
    const s = await start({ device_name: 'Work laptop', platform: 'linux', device_pubkey: Buffer.alloc(32, 7).toString('base64') });
    const { poll_token: token, link_code: code } = s.json.data;
    expect((await poll(token)).json.data).toEqual({ status: 'pending', poll_after: 3 });
    const { user, page, result } = await approveInBrowser(code, 'approve');
    expect(page).toContain('Work laptop');
    expect(page).toContain('Linux');
    expect(result).toContain('Work laptop is now linked');
    const first = await poll(token);
    expect(first.statusCode).toBe(200);
    const d = first.json.data;
    expect(Object.keys(d).sort()).toEqual(['device_id', 'expires_time', 'public_key', 'secret_key', 'status']);
    expect(d.status).toBe('approved');
    expect(d.public_key).toMatch(/^sess_/);
    expect(Number.isInteger(d.device_id)).toBe(true);
    const who = await t.request({ method: 'GET', url: '/api/v1/auth/session', headers: { public_key: d.public_key, secret_key: d.secret_key } });
    expect(who.json.data.user_id).toBe(user.userId);
    const key = await t.services.db.selectFrom('apk_api_keys').selectAll().where('apk_api_key_id', '=', d.device_id).executeTakeFirstOrThrow();
    expect(key.apk_name).toBe('Work laptop');
    const second = await poll(token);
    expect(second.statusCode).toBe(409);
    expect(second.json.errortype).toBe('ActionError');
  });

  describe('sealed_vault_key', () => {
    const INFO = Buffer.from('gatehouse device-link vault key');

    /** The device's X25519 key pair (its private key never leaves the device). */
    function deviceKeys() {
      const { publicKey, privateKey } = generateKeyPairSync('x25519');
      const raw = publicKey.export({ format: 'der', type: 'spki' }).subarray(-32);
      return { pubkeyB64: raw.toString('base64'), privateKey };
    }

    const x25519Public = (raw: Buffer) => createPublicKey({ key: Buffer.concat([Buffer.from('302a300506032b656e032100', 'hex'), raw]), format: 'der', type: 'spki' });

    /** What the approving user's own client does: seal the vault secret to the device's public key (ECIES). */
    function seal(secret: Buffer, devicePubkeyB64: string): string {
      const eph = generateKeyPairSync('x25519');
      const ephRaw = eph.publicKey.export({ format: 'der', type: 'spki' }).subarray(-32);
      const shared = diffieHellman({ privateKey: eph.privateKey, publicKey: x25519Public(Buffer.from(devicePubkeyB64, 'base64')) });
      const key = Buffer.from(hkdfSync('sha256', shared, Buffer.concat([ephRaw, Buffer.from(devicePubkeyB64, 'base64')]), INFO, 32));
      const iv = randomBytes(12);
      const cipher = createCipheriv('aes-256-gcm', key, iv);
      const ct = Buffer.concat([cipher.update(secret), cipher.final()]);
      return Buffer.concat([ephRaw, iv, cipher.getAuthTag(), ct]).toString('base64');
    }

    /** What the device does with the first poll's sealed_vault_key. */
    function open(sealedB64: string, devicePubkeyB64: string, privateKey: KeyObject): Buffer {
      const blob = Buffer.from(sealedB64, 'base64');
      const ephRaw = blob.subarray(0, 32);
      const shared = diffieHellman({ privateKey, publicKey: x25519Public(ephRaw) });
      const key = Buffer.from(hkdfSync('sha256', shared, Buffer.concat([ephRaw, Buffer.from(devicePubkeyB64, 'base64')]), INFO, 32));
      const decipher = createDecipheriv('aes-256-gcm', key, blob.subarray(32, 44));
      decipher.setAuthTag(blob.subarray(44, 60));
      return Buffer.concat([decipher.update(blob.subarray(60)), decipher.final()]);
    }

    async function decide(code: string, fields: Record<string, string>) {
      const u = await t.createUser();
      const c = await signIn(t, u.email, u.password);
      const page = await c.get(`/device?code=${encodeURIComponent(code)}`);
      const session = (await t.services.webSessions.load(c.jar.cookies.get('gatehouse_session')))!;
      const res = await c.postForm('/device', { code, form_token: formToken(session, 'device'), ...fields });
      return { page: page.body, res };
    }

    it('is delivered once, only when the approver sealed the vault secret to device_pubkey, and opens with the device private key', async () => {
      const device = deviceKeys();
      const s = await start({ device_name: 'Vault laptop', platform: 'linux', device_pubkey: device.pubkeyB64 });
      const vaultSecret = randomBytes(32);
      const { page, res } = await decide(s.json.data.link_code, { decision: 'approve', sealed_vault_key: seal(vaultSecret, device.pubkeyB64) });
      // The approval page hands the device's key to the client that seals (the user's vault holder).
      expect(page).toContain(`data-device-pubkey="${device.pubkeyB64}"`);
      expect(page).toContain('name="sealed_vault_key"');
      expect(res.statusCode).toBe(200);
      const first = await poll(s.json.data.poll_token);
      expect(Object.keys(first.json.data).sort()).toEqual(['device_id', 'expires_time', 'public_key', 'sealed_vault_key', 'secret_key', 'status']);
      expect(open(first.json.data.sealed_vault_key, device.pubkeyB64, device.privateKey).equals(vaultSecret)).toBe(true);
      // Another key pair cannot open it.
      expect(() => open(first.json.data.sealed_vault_key, device.pubkeyB64, deviceKeys().privateKey)).toThrow();
      // Delivered once, then scrubbed from the ceremony.
      expect((await poll(s.json.data.poll_token)).statusCode).toBe(409);
      const row = await t.services.db.selectFrom('dvl_device_links').select(['dvl_sealed_vault_key', 'dvl_status']).where('dvl_apk_api_key_id', '=', first.json.data.device_id).executeTakeFirstOrThrow();
      expect(row).toEqual({ dvl_sealed_vault_key: null, dvl_status: 'delivered' });
    });

    it('is absent when the approver has no vault to seal, and when the device sent no key', async () => {
      const device = deviceKeys();
      const withKey = await start({ device_name: 'Plain laptop', platform: 'macos', device_pubkey: device.pubkeyB64 });
      await decide(withKey.json.data.link_code, { decision: 'approve', sealed_vault_key: '' });
      const a = await poll(withKey.json.data.poll_token);
      expect(a.json.data.status).toBe('approved');
      expect(a.json.data).not.toHaveProperty('sealed_vault_key');

      const noKey = await start({ device_name: 'Keyless', platform: 'windows' });
      const { page } = await decide(noKey.json.data.link_code, { decision: 'approve' });
      expect(page).not.toContain('data-device-pubkey');
      expect(page).not.toContain('name="sealed_vault_key"');
      const b = await poll(noKey.json.data.poll_token);
      expect(b.json.data.status).toBe('approved');
      expect(b.json.data).not.toHaveProperty('sealed_vault_key');
    });

    it('refuses a sealed key for a device that sent no key, or one that is not base64, deciding nothing', async () => {
      const device = deviceKeys();
      const noKey = await start({ device_name: 'Keyless', platform: 'windows' });
      const refused = await decide(noKey.json.data.link_code, { decision: 'approve', sealed_vault_key: seal(randomBytes(32), device.pubkeyB64) });
      expect(refused.res.statusCode).toBe(400);
      expect(refused.res.body).toContain('This device sent no key to seal to.');
      expect((await poll(noKey.json.data.poll_token)).json.data).toEqual({ status: 'pending', poll_after: 3 });

      const withKey = await start({ device_name: 'Vault laptop', platform: 'linux', device_pubkey: device.pubkeyB64 });
      // Not base64; not canonical base64; longer than any sealed key.
      for (const bad of ['not base64!', 'QUJ', 'A'.repeat(2000)]) {
        const r = await decide(withKey.json.data.link_code, { decision: 'approve', sealed_vault_key: bad });
        expect(r.res.statusCode, bad).toBe(400);
      }
      expect((await poll(withKey.json.data.poll_token)).json.data).toEqual({ status: 'pending', poll_after: 3 });
    });

    it('is dropped when the user refuses', async () => {
      const device = deviceKeys();
      const s = await start({ device_name: 'Vault laptop', platform: 'linux', device_pubkey: device.pubkeyB64 });
      await decide(s.json.data.link_code, { decision: 'deny', sealed_vault_key: seal(randomBytes(32), device.pubkeyB64) });
      expect((await poll(s.json.data.poll_token)).json.data).toEqual({ status: 'denied' });
      const row = await t.services.db.selectFrom('dvl_device_links').select('dvl_sealed_vault_key').where('dvl_status', '=', 'denied').where('dvl_device_pubkey', '=', device.pubkeyB64).executeTakeFirstOrThrow();
      expect(row.dvl_sealed_vault_key).toBeNull();
    });
  });

  it('reports denied when the user refuses', async () => {
    const s = await start({ device_name: 'Unknown PC', platform: 'windows' });
    await approveInBrowser(s.json.data.link_code, 'deny');
    expect((await poll(s.json.data.poll_token)).json.data).toEqual({ status: 'denied' });
  });

  it('answers 404 for an unknown token and for a ceremony past 10 minutes', async () => {
    const unknown = await poll('0'.repeat(64));
    expect(unknown.statusCode).toBe(404);
    expect(unknown.json.errortype).toBe('NotFound');
    const s = await start({ device_name: 'Slow', platform: 'macos' });
    t.clock.advanceSeconds(600);
    const expired = await poll(s.json.data.poll_token);
    expect(expired.statusCode).toBe(404);
    expect(expired.json.errortype).toBe('NotFound');
  });

  it('counts wrong codes on the approval page toward the failed-attempt limit', async () => {
    const t2 = await createTestApp({ settings: { api_auth_rate_limit_requests: 2 } });
    try {
      const u = await t2.createUser();
      const c = await signIn(t2, u.email, u.password, '192.0.2.44');
      expect((await c.get('/device?code=AAAA-AAAA')).statusCode).toBe(404);
      expect((await c.get('/device?code=BBBB-BBBB')).statusCode).toBe(404);
      expect((await c.get('/device?code=CCCC-CCCC')).statusCode).toBe(429);
    } finally {
      await t2.close();
    }
  });

  it('meters start and poll with the device-link bucket per IP', async () => {
    await t.services.settings.set('api_device_link_rate_limit_requests', 2);
    try {
      const ip = '192.0.2.55';
      const s = await start({ device_name: 'A', platform: 'macos' }, ip);
      expect((await poll(s.json.data.poll_token, ip)).statusCode).toBe(200);
      const limited = await poll(s.json.data.poll_token, ip);
      expect(limited.statusCode).toBe(429);
      expect(limited.json.data).toMatchObject({ limit: 2, window_seconds: 3600, count: 2 });
    } finally {
      await t.services.settings.set('api_device_link_rate_limit_requests', 600);
    }
  });
});

describe('GET /app/navigation', () => {
  let t: TestApp;
  const nav = {
    entries: [
      { slug: 'subscription', label: 'Subscription', destination: { type: 'web', url: '/profile/subscription' } },
      { slug: 'drive', label: 'Drive', destination: { type: 'native', screen: 'drive', fallback_url: '/drive' }, requires_setting: 'drive_active' },
      { slug: 'admin', label: 'Admin', destination: { type: 'web', url: '/admin/tiers' }, min_permission: 5 },
      { slug: 'sign_out', label: 'Sign out', destination: { type: 'native', screen: 'sign_out', fallback_url: '/logout' }, shell_auth: true },
    ],
    tabs: { ios: ['drive', 'subscription'], android: ['admin'] },
  };
  beforeAll(async () => {
    t = await createTestApp({ settings: { app_navigation: nav } });
  });
  afterAll(async () => t.close());

  it('returns the entries the user may see and the tabs pinned for the client_app, without shell auth entries', async () => {
    const u = await t.createUser();
    const { headers } = await t.login(u.email, u.password);
    const res = await t.request({ method: 'GET', url: '/api/v1/app/navigation', headers: { ...headers, client_app: 'ios', client_version: '1.0.0' } });
    expect(res.statusCode).toBe(200);
    expect(res.json.data).toEqual({
      entries: [{ slug: 'subscription', label: 'Subscription', destination: { type: 'web', url: '/profile/subscription' } }],
      tabs: ['subscription'],
    });
    await t.services.settings.set('drive_active', true);
    const staff = await t.createUser({ permission: 5 });
    const s = await t.login(staff.email, staff.password);
    const res2 = await t.request({ method: 'GET', url: '/api/v1/app/navigation', headers: { ...s.headers, client_app: 'ios' } });
    expect(res2.json.data.entries.map((e: { slug: string }) => e.slug)).toEqual(['subscription', 'drive', 'admin']);
    expect(res2.json.data.tabs).toEqual(['drive', 'subscription']);
    const none = await t.request({ method: 'GET', url: '/api/v1/app/navigation', headers: s.headers });
    expect(none.json.data.tabs).toEqual([]);
  });

  it('refuses machine keys and browser sessions with 403', async () => {
    const { headers } = await t.keyHeaders();
    expect((await t.request({ method: 'GET', url: '/api/v1/app/navigation', headers })).statusCode).toBe(403);
    const u = await t.createUser();
    const c = await signIn(t, u.email, u.password);
    const b = await c.api('GET', '/api/v1/app/navigation');
    expect(b.statusCode).toBe(403);
    expect(b.json.errortype).toBe('AuthenticationError');
  });

  it('refuses an ill-shaped app_navigation setting', async () => {
    await expect(t.services.settings.set('app_navigation', { entries: [{ slug: 'x' }] })).rejects.toThrow(/label/);
    await expect(t.services.settings.set('app_navigation', { entries: [], tabs: { ios: ['missing'] } })).rejects.toThrow(/tabs/);
  });
});
