import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { formToken } from '../../src/accounts/web-sessions.js';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { addForTest } from '../helpers/composed.js';
import { signIn, webClient, type WebClient } from '../helpers/browser-session.js';
import { SoftAuthenticator } from '../helpers/soft-authenticator.js';

const ORIGIN = 'https://members.example.com';
const RP_ID = 'members.example.com';
const action = (name: string) => `/api/v1/action/${name}`;
const PASSKEY_ACTIONS = [
  'passkey_login_options',
  'passkey_login_verify',
  'passkey_register_options',
  'passkey_register_verify',
  'passkey_stepup_options',
  'passkey_stepup_verify',
  'passkey_rename',
  'passkey_revoke',
];

let t: TestApp;
beforeAll(async () => {
  t = await createTestApp({ config: { baseUrl: ORIGIN } });
});
afterAll(async () => t.close());

async function post(c: WebClient, name: string, payload: unknown = {}) {
  return c.api('POST', action(name), { payload });
}

/** A signed-in member with one enrolled passkey. */
async function memberWithPasskey(opts: { prf?: boolean } = {}) {
  const u = await t.createUser();
  const c = await signIn(t, u.email, u.password);
  const auth = new SoftAuthenticator(ORIGIN, RP_ID, opts);
  const options = await post(c, 'passkey_register_options', { current_password: u.password });
  expect(options.statusCode).toBe(200);
  const verified = await post(c, 'passkey_register_verify', { ...auth.register(options.json.data), label: 'Laptop' });
  expect(verified.statusCode).toBe(200);
  return { ...u, c, auth, passkeyId: verified.json.data.passkey.passkey_id as number };
}

async function stepUp(c: WebClient, auth: SoftAuthenticator) {
  const options = await post(c, 'passkey_stepup_options');
  expect(options.statusCode).toBe(200);
  const res = await post(c, 'passkey_stepup_verify', auth.assert(options.json.data));
  expect(res.statusCode).toBe(200);
  return res;
}

describe('passkey actions are for browser sessions only', () => {
  it('answers 403 AuthenticationError to API keys (machine and session keys) on every passkey action', async () => {
    const machine = await t.keyHeaders();
    const u = await t.createUser();
    const session = await t.login(u.email, u.password);
    for (const headers of [machine.headers, session.headers]) {
      for (const name of PASSKEY_ACTIONS) {
        const res = await t.request({ method: 'POST', url: action(name), headers, payload: {} });
        expect([name, res.statusCode, res.json.errortype]).toEqual([name, 403, 'AuthenticationError']);
      }
    }
  });

  it('publishes sign-in as sessionless and the rest as sessioned', async () => {
    const { headers } = await t.keyHeaders();
    const res = await t.request({ method: 'GET', url: '/api/v1/actions', headers });
    expect(res.json.data.passkey_login_options.requires_session).toBe(false);
    expect(res.json.data.passkey_login_verify.requires_session).toBe(false);
    expect(res.json.data.passkey_login_verify.input.response).toEqual({ type: 'object', required: true });
    for (const name of PASSKEY_ACTIONS.slice(2)) expect(res.json.data[name].requires_session).toBe(true);
  });

  it('refuses a browser session without its CSRF token', async () => {
    const c = webClient(t);
    await c.get('/login');
    const res = await c.api('POST', action('passkey_login_options'), { csrf: null, payload: {} });
    expect(res.statusCode).toBe(403);
    expect(res.json.errortype).toBe('AuthenticationError');
  });
});

describe('enrollment', () => {
  it('needs the account password for the first passkey', async () => {
    const u = await t.createUser();
    const c = await signIn(t, u.email, u.password);
    const missing = await post(c, 'passkey_register_options');
    expect(missing.statusCode).toBe(422);
    expect(missing.json.errortype).toBe('ValidationError');
    expect(missing.json.validation_errors.current_password).toBe('is required to enroll your first passkey');
    const wrong = await post(c, 'passkey_register_options', { current_password: 'not-the-password' });
    expect(wrong.statusCode).toBe(422);
    expect(wrong.json.validation_errors.current_password).toBe('is incorrect');
  });

  it('asks for a resident ES256/RS256 credential with no attestation and the PRF extension, and stores it', async () => {
    const u = await t.createUser();
    const c = await signIn(t, u.email, u.password);
    const options = await post(c, 'passkey_register_options', { current_password: u.password });
    expect(options.statusCode).toBe(200);
    const o = options.json.data;
    expect(o.rp).toEqual({ name: 'Gatehouse', id: RP_ID });
    expect(o.attestation).toBe('none');
    expect(o.pubKeyCredParams.map((p: { alg: number }) => p.alg)).toEqual([-7, -257]);
    expect(o.authenticatorSelection).toMatchObject({ residentKey: 'preferred', userVerification: 'required' });
    expect(o.timeout).toBe(300_000);
    expect(o.extensions.prf).toEqual({});
    expect(Buffer.from(o.challenge, 'base64url')).toHaveLength(32);
    const auth = new SoftAuthenticator(ORIGIN, RP_ID, { prf: true });
    const res = await post(c, 'passkey_register_verify', { ...auth.register(o), label: 'Phone' });
    expect(res.statusCode).toBe(200);
    expect(res.json.data.passkey).toMatchObject({ label: 'Phone', prf_capable: true, last_used_time: null });
    expect(Object.keys(res.json.data.passkey).sort()).toEqual(['create_time', 'label', 'last_used_time', 'passkey_id', 'prf_capable']);
  });

  it('records a credential that did not evaluate PRF as not PRF-capable, and gives it a default label', async () => {
    const u = await t.createUser();
    const c = await signIn(t, u.email, u.password);
    const options = await post(c, 'passkey_register_options', { current_password: u.password });
    const res = await post(c, 'passkey_register_verify', new SoftAuthenticator(ORIGIN, RP_ID).register(options.json.data));
    expect(res.json.data.passkey).toMatchObject({ label: 'Passkey 1', prf_capable: false });
  });

  it('refuses an attestation made for another origin, and the challenge is spent after one try', async () => {
    const u = await t.createUser();
    const c = await signIn(t, u.email, u.password);
    const options = await post(c, 'passkey_register_options', { current_password: u.password });
    const evil = new SoftAuthenticator('https://evil.example', RP_ID).register(options.json.data);
    const res = await post(c, 'passkey_register_verify', evil);
    expect(res.statusCode).toBe(422);
    expect(res.json.data.reason).toBe('verification_failed');
    const again = await post(c, 'passkey_register_verify', new SoftAuthenticator(ORIGIN, RP_ID).register(options.json.data));
    expect(again.statusCode).toBe(422);
    expect(again.json.data.reason).toBe('no_ceremony');
  });

  it('refuses a credential made without user verification', async () => {
    const u = await t.createUser();
    const c = await signIn(t, u.email, u.password);
    const options = await post(c, 'passkey_register_options', { current_password: u.password });
    const res = await post(c, 'passkey_register_verify', new SoftAuthenticator(ORIGIN, RP_ID, { userVerified: false }).register(options.json.data));
    expect([res.statusCode, res.json.data.reason]).toEqual([422, 'verification_failed']);
  });

  it('keeps one ceremony per session: a new options call replaces the pending one, of any kind', async () => {
    const m = await memberWithPasskey();
    await stepUp(m.c, m.auth);
    const register = await post(m.c, 'passkey_register_options');
    expect(register.statusCode).toBe(200);
    const stepup = await post(m.c, 'passkey_stepup_options');
    const replaced = await post(m.c, 'passkey_register_verify', new SoftAuthenticator(ORIGIN, RP_ID).register(register.json.data));
    expect([replaced.statusCode, replaced.json.data.reason]).toEqual([422, 'no_ceremony']);
    // Same kind: the newer challenge replaces the older, which can no longer be answered.
    const first = await post(m.c, 'passkey_stepup_options');
    const stale = await post(m.c, 'passkey_stepup_verify', m.auth.assert(stepup.json.data));
    expect([stale.statusCode, stale.json.data.reason]).toEqual([422, 'verification_failed']);
    expect((await post(m.c, 'passkey_stepup_verify', m.auth.assert(first.json.data))).json.data.reason).toBe('no_ceremony');
  });

  it('refuses a step-up whose challenge is older than 5 minutes', async () => {
    const m = await memberWithPasskey();
    const options = await post(m.c, 'passkey_stepup_options');
    t.clock.advanceSeconds(5 * 60 + 1);
    const res = await post(m.c, 'passkey_stepup_verify', m.auth.assert(options.json.data));
    expect([res.statusCode, res.json.errortype, res.json.data.reason]).toEqual([422, 'ActionError', 'challenge_expired']);
    expect((await post(m.c, 'passkey_register_options')).json.data.reason).toBe('stepup_required');
  });

  it('needs a recent step-up for a second passkey, for passkey_stepup_window_seconds', async () => {
    const m = await memberWithPasskey();
    const refused = await post(m.c, 'passkey_register_options', { current_password: m.password });
    expect(refused.statusCode).toBe(422);
    expect(refused.json.data.reason).toBe('stepup_required');
    const stepped = await stepUp(m.c, m.auth);
    expect(stepped.json.data.stepped_up).toBe(true);
    const second = await post(m.c, 'passkey_register_options');
    expect(second.statusCode).toBe(200);
    // The first passkey is excluded so the same authenticator is not enrolled twice.
    expect(second.json.data.excludeCredentials.map((c: { id: string }) => c.id)).toEqual([m.auth.credentials[0]!.id]);
    const other = new SoftAuthenticator(ORIGIN, RP_ID);
    const added = await post(m.c, 'passkey_register_verify', { ...other.register(second.json.data), label: 'Key' });
    expect(added.statusCode).toBe(200);
    t.clock.advanceSeconds(301);
    const late = await post(m.c, 'passkey_register_options');
    expect(late.json.data.reason).toBe('stepup_required');
  });

  it('a step-up with another user\'s passkey is refused', async () => {
    const a = await memberWithPasskey();
    const b = await memberWithPasskey();
    const options = await post(a.c, 'passkey_stepup_options');
    const res = await post(a.c, 'passkey_stepup_verify', b.auth.assert(options.json.data));
    expect(res.statusCode).toBe(422);
    expect(res.json.data.reason).toBe('verification_failed');
    expect((await post(a.c, 'passkey_register_options')).json.data.reason).toBe('stepup_required');
  });

  it('a step-up needs a passkey to confirm with', async () => {
    const u = await t.createUser();
    const c = await signIn(t, u.email, u.password);
    const res = await post(c, 'passkey_stepup_options');
    expect(res.statusCode).toBe(422);
    expect(res.json.data.reason).toBe('no_passkeys');
  });
});

describe('passwordless sign-in', () => {
  it('signs a visitor in with a passkey, like /login: new session cookie, CSRF token and mirror cookie', async () => {
    const m = await memberWithPasskey();
    const visitor = webClient(t);
    const page = await visitor.get('/login');
    const guestCsrf = visitor.csrf();
    expect(page.body).toContain('Sign in with a passkey');
    const options = await post(visitor, 'passkey_login_options');
    expect(options.statusCode).toBe(200);
    expect(options.json.data).toMatchObject({ rpId: RP_ID, userVerification: 'required', timeout: 300_000 });
    expect(options.json.data.allowCredentials).toBeUndefined(); // any discoverable passkey of this site
    const res = await post(visitor, 'passkey_login_verify', m.auth.assert(options.json.data));
    expect(res.statusCode).toBe(200);
    expect(res.json.data.user_id).toBe(m.userId);
    expect(res.cookies.map((c) => c.name).sort()).toEqual(['gatehouse_session', 'service_api_csrf']);
    expect(visitor.csrf()).not.toBe(guestCsrf);
    const session = await visitor.api('GET', '/api/v1/auth/session');
    expect(session.statusCode).toBe(200);
    expect(session.json.data.user_id).toBe(m.userId);
    const home = await visitor.get('/');
    expect(home.body).toContain(`<meta name="service-api-csrf" content="${visitor.csrf()}">`);
    // The passkey's last use is recorded and readable by its owner over CRUD.
    const crud = await visitor.api('GET', `/api/v1/Passkey/${m.passkeyId}`);
    expect(crud.statusCode).toBe(200);
    expect(crud.json.data.pky_last_used_time).not.toBeNull();
  });

  it('refuses a replayed assertion and an expired challenge with the same 401', async () => {
    const m = await memberWithPasskey();
    const visitor = webClient(t);
    await visitor.get('/login');
    const options = await post(visitor, 'passkey_login_options');
    const assertion = m.auth.assert(options.json.data);
    const other = webClient(t);
    await other.get('/login');
    // Replayed into another session that never asked for this challenge.
    await post(other, 'passkey_login_options');
    const replayedElsewhere = await post(other, 'passkey_login_verify', assertion);
    expect(replayedElsewhere.statusCode).toBe(401);
    const first = await post(visitor, 'passkey_login_verify', assertion);
    expect(first.statusCode).toBe(200);
    const replayed = await post(visitor, 'passkey_login_verify', assertion);
    expect(replayed.statusCode).toBe(401);
    expect(replayed.json.errortype).toBe('AuthenticationError');

    const late = webClient(t);
    await late.get('/login');
    const lateOptions = await post(late, 'passkey_login_options');
    t.clock.advanceSeconds(5 * 60 + 1);
    const expired = await post(late, 'passkey_login_verify', m.auth.assert(lateOptions.json.data));
    expect(expired.statusCode).toBe(401);
    expect(expired.json.error).toBe(replayed.json.error);
  });

  it('refuses an unknown or revoked credential, and counts every failure toward the failed-auth limit', async () => {
    const t2 = await createTestApp({ config: { baseUrl: ORIGIN }, settings: { api_auth_rate_limit_requests: 3 } });
    try {
      const u = await t2.createUser();
      const c = await signIn(t2, u.email, u.password);
      const auth = new SoftAuthenticator(ORIGIN, RP_ID);
      const reg = await post(c, 'passkey_register_options', { current_password: u.password });
      const id = (await post(c, 'passkey_register_verify', auth.register(reg.json.data))).json.data.passkey.passkey_id;
      await stepUp(c, auth);
      expect((await post(c, 'passkey_revoke', { passkey_id: id })).statusCode).toBe(200);
      const stranger = new SoftAuthenticator(ORIGIN, RP_ID);
      stranger.register({ challenge: 'x', user: { id: 'x' } });
      const v = webClient(t2);
      await v.get('/login');
      const statuses: number[] = [];
      for (const who of [auth, stranger, auth, stranger]) {
        const o = await post(v, 'passkey_login_options');
        statuses.push(o.statusCode === 200 ? (await post(v, 'passkey_login_verify', who.assert(o.json.data))).statusCode : o.statusCode);
      }
      expect(statuses).toEqual([401, 401, 401, 429]);
    } finally {
      await t2.close();
    }
  });

  it('logs a sign-count regression and still signs in (synced passkeys report 0)', async () => {
    const m = await memberWithPasskey();
    const v = webClient(t);
    await v.get('/login');
    let o = await post(v, 'passkey_login_options');
    expect((await post(v, 'passkey_login_verify', m.auth.assert(o.json.data, undefined, { counter: 10 }))).statusCode).toBe(200);
    const v2 = webClient(t);
    await v2.get('/login');
    o = await post(v2, 'passkey_login_options');
    expect((await post(v2, 'passkey_login_verify', m.auth.assert(o.json.data, undefined, { counter: 3 }))).statusCode).toBe(200);
    // The stored counter never goes back.
    const row = await t.database.db.selectFrom('pky_passkeys').select('pky_sign_count').where('pky_passkey_id', '=', m.passkeyId).executeTakeFirstOrThrow();
    expect(Number(row.pky_sign_count)).toBe(10);
  });

  it('refuses an assertion whose user handle is not the passkey owner\'s', async () => {
    const m = await memberWithPasskey();
    const other = await memberWithPasskey();
    const v = webClient(t);
    await v.get('/login');
    const o = await post(v, 'passkey_login_options');
    const assertion = m.auth.assert(o.json.data) as { response: Record<string, unknown> };
    assertion.response.userHandle = other.auth.credentials[0]!.userHandle;
    const res = await post(v, 'passkey_login_verify', assertion);
    expect([res.statusCode, res.json.errortype]).toEqual([401, 'AuthenticationError']);
  });

  it('refuses an assertion without user verification', async () => {
    const m = await memberWithPasskey();
    const v = webClient(t);
    await v.get('/login');
    const o = await post(v, 'passkey_login_options');
    const res = await post(v, 'passkey_login_verify', m.auth.assert(o.json.data, undefined, { userVerified: false }));
    expect([res.statusCode, res.json.errortype]).toEqual([401, 'AuthenticationError']);
  });

  it('records the sign-in time, as /login does', async () => {
    const m = await memberWithPasskey();
    const v = webClient(t);
    await v.get('/login');
    const o = await post(v, 'passkey_login_options');
    expect((await post(v, 'passkey_login_verify', m.auth.assert(o.json.data))).statusCode).toBe(200);
    const row = await t.database.db.selectFrom('usr_users').select('usr_lastlogin_time').where('usr_user_id', '=', m.userId).executeTakeFirstOrThrow();
    expect(row.usr_lastlogin_time?.getTime()).toBe(t.clock.now().getTime());
  });

  it('lets a registered sign-in veto (a vault owner needs the password) refuse a valid passkey, leaving the visitor signed out', async () => {
    const m = await memberWithPasskey();
    const unregister = addForTest(t.services.passkeyVetoes.signIn, async (_db, { userId }) => (userId === m.userId ? { reason: 'password_required', message: 'This account signs in with its password' } : null));
    try {
      const v = webClient(t);
      await v.get('/login');
      const o = await post(v, 'passkey_login_options');
      const res = await post(v, 'passkey_login_verify', m.auth.assert(o.json.data));
      expect(res.statusCode).toBe(422);
      expect(res.json).toMatchObject({ errortype: 'ActionError', error: 'This account signs in with its password', data: { reason: 'password_required' } });
      expect((await v.api('GET', '/api/v1/auth/session')).statusCode).toBe(401);
      // Step-up in an existing session is unaffected.
      await stepUp(m.c, m.auth);
    } finally {
      unregister();
    }
  });

  it('refuses a passkey of a disabled user', async () => {
    const m = await memberWithPasskey();
    await t.database.db.updateTable('usr_users').set({ usr_is_disabled: true }).where('usr_user_id', '=', m.userId).execute();
    const v = webClient(t);
    await v.get('/login');
    const o = await post(v, 'passkey_login_options');
    expect((await post(v, 'passkey_login_verify', m.auth.assert(o.json.data))).statusCode).toBe(401);
  });
});

describe('rename and revoke', () => {
  it('acts on the caller\'s own passkeys only', async () => {
    const a = await memberWithPasskey();
    const b = await memberWithPasskey();
    const renamed = await post(a.c, 'passkey_rename', { passkey_id: a.passkeyId, label: ' Work laptop ' });
    expect(renamed.statusCode).toBe(200);
    expect(renamed.json.data.passkey.label).toBe('Work laptop');
    await stepUp(a.c, a.auth);
    for (const name of ['passkey_rename', 'passkey_revoke']) {
      const res = await post(a.c, name, { passkey_id: b.passkeyId, label: 'mine now' });
      expect([name, res.statusCode, res.json.data.reason]).toEqual([name, 422, 'not_found']);
    }
    const blank = await post(a.c, 'passkey_rename', { passkey_id: a.passkeyId, label: '   ' });
    expect(blank.statusCode).toBe(422);
    expect(blank.json.errortype).toBe('ValidationError');
    const revoked = await post(a.c, 'passkey_revoke', { passkey_id: a.passkeyId });
    expect(revoked.json.data).toEqual({ revoked: true, passkey_id: a.passkeyId });
    expect((await post(a.c, 'passkey_revoke', { passkey_id: a.passkeyId })).json.data.reason).toBe('not_found');
    // A revoked passkey is gone from the owner's CRUD reads too.
    expect((await a.c.api('GET', '/api/v1/Passkeys')).json.num_results).toBe(0);
    expect((await a.c.api('GET', `/api/v1/Passkey/${a.passkeyId}`)).statusCode).toBe(400);
    // With no live passkey left, a new first passkey needs the password again.
    expect((await post(a.c, 'passkey_register_options')).json.validation_errors.current_password).toBeDefined();
  });

  it('revoking needs a recent step-up, like enrolling a later passkey (422 ActionError stepup_required)', async () => {
    const m = await memberWithPasskey();
    const refused = await post(m.c, 'passkey_revoke', { passkey_id: m.passkeyId });
    expect([refused.statusCode, refused.json.errortype, refused.json.data.reason]).toEqual([422, 'ActionError', 'stepup_required']);
    expect((await m.c.api('GET', '/api/v1/Passkeys')).json.num_results).toBe(1);
    await stepUp(m.c, m.auth);
    t.clock.advanceSeconds(301);
    const late = await post(m.c, 'passkey_revoke', { passkey_id: m.passkeyId });
    expect([late.statusCode, late.json.data.reason]).toEqual([422, 'stepup_required']);
    await stepUp(m.c, m.auth);
    expect((await post(m.c, 'passkey_revoke', { passkey_id: m.passkeyId })).json.data).toEqual({ revoked: true, passkey_id: m.passkeyId });
  });

  it('is refused while staff are signed in as the member (422 ActionError login_as), like enrolment', async () => {
    const m = await memberWithPasskey();
    const staff = await t.createUser({ permission: 5 });
    const c = await signIn(t, staff.email, staff.password);
    await c.get('/');
    const session = (await t.services.webSessions.load(c.jar.cookies.get('gatehouse_session')))!;
    const res = await c.postForm(`/admin/users/${m.userId}/login-as`, { form_token: formToken(session, 'login-as') });
    expect(res.statusCode).toBe(303);
    expect((await c.api('GET', '/api/v1/auth/session')).json.data.user_id).toBe(m.userId);
    for (const [name, payload] of [['passkey_revoke', { passkey_id: m.passkeyId }], ['passkey_register_options', {}]] as const) {
      const refused = await post(c, name, payload);
      expect([name, refused.statusCode, refused.json.errortype, refused.json.data.reason]).toEqual([name, 422, 'ActionError', 'login_as']);
    }
    expect((await m.c.api('GET', '/api/v1/Passkeys')).json.num_results).toBe(1);
  });

  it('asks registered vetoes before revoking', async () => {
    const m = await memberWithPasskey();
    await stepUp(m.c, m.auth);
    const unregister = addForTest(t.services.passkeyVetoes.revoke, async (_db, { userId }) => (userId === m.userId ? { reason: 'unlocker_floor', message: 'This passkey is your last vault unlocker' } : null));
    try {
      const res = await post(m.c, 'passkey_revoke', { passkey_id: m.passkeyId });
      expect(res.statusCode).toBe(422);
      expect(res.json).toMatchObject({ errortype: 'ActionError', error: 'This passkey is your last vault unlocker', data: { reason: 'unlocker_floor' } });
    } finally {
      unregister();
    }
    expect((await post(m.c, 'passkey_revoke', { passkey_id: m.passkeyId })).statusCode).toBe(200);
  });
});

describe('Passkey over CRUD', () => {
  it('is readable by its owner only, even against staff, without credential material, and never writable', async () => {
    const m = await memberWithPasskey();
    const own = await m.c.api('GET', '/api/v1/Passkeys');
    expect(own.statusCode).toBe(200);
    expect(own.json.num_results).toBe(1);
    const row = own.json.data[0];
    expect(row.pky_label).toBe('Laptop');
    expect(row).not.toHaveProperty('pky_credential_id');
    expect(row).not.toHaveProperty('pky_public_key');
    expect(row).not.toHaveProperty('pky_sign_count');
    const staff = await t.staffHeaders({ userPermission: 10 });
    const single = await t.request({ method: 'GET', url: `/api/v1/Passkey/${m.passkeyId}`, headers: staff.headers });
    expect([single.statusCode, single.json.errortype]).toEqual([403, 'AuthenticationError']);
    const list = await t.request({ method: 'GET', url: '/api/v1/Passkeys', headers: staff.headers });
    expect(list.json.num_results).toBe(0);
    for (const [method, url] of [['POST', '/api/v1/Passkey'], ['PUT', `/api/v1/Passkey/${m.passkeyId}?pky_label=x`], ['DELETE', `/api/v1/Passkey/${m.passkeyId}`]] as const) {
      const res = await t.request({ method, url, headers: staff.headers, ...(method === 'POST' ? { payload: 'pky_label=x', headers: { ...staff.headers, 'content-type': 'application/x-www-form-urlencoded' } } : {}) });
      expect([method, res.statusCode]).toEqual([method, 404]);
    }
    // Not even its owner writes it over CRUD: rename and revoke are actions.
    for (const [method, url] of [['PUT', `/api/v1/Passkey/${m.passkeyId}?pky_label=x`], ['DELETE', `/api/v1/Passkey/${m.passkeyId}`]] as const) {
      const res = await m.c.api(method, url);
      expect([method, res.statusCode]).toEqual([method, 404]);
    }
    const owner = await m.c.api('POST', '/api/v1/Passkey', { payload: { pky_label: 'x', pky_credential_id: 'x', pky_public_key: 'x' } });
    expect(owner.statusCode).toBe(404);
    expect((await m.c.api('GET', '/api/v1/Passkeys')).json.data.map((r: { pky_label: string }) => r.pky_label)).toEqual(['Laptop']);
  });
});

describe('passkey pages', () => {
  it('/profile/security needs a signed-in member and lists only their own live passkeys', async () => {
    const anonymous = webClient(t);
    const redirected = await anonymous.get('/profile/security');
    expect(redirected.statusCode).toBe(303);
    expect(redirected.headers.location).toBe('/login?next=%2Fprofile%2Fsecurity');

    const a = await memberWithPasskey({ prf: true });
    const b = await memberWithPasskey();
    await post(b.c, 'passkey_rename', { passkey_id: b.passkeyId, label: 'Not yours <b>' });
    const page = await a.c.get('/profile/security');
    expect(page.statusCode).toBe(200);
    expect(page.body).toContain(`<tr data-passkey-id="${a.passkeyId}">`);
    expect(page.body).not.toContain(`data-passkey-id="${b.passkeyId}"`);
    expect(page.body).toContain('<td data-label="PRF capable">Yes</td>');
    expect(page.body).toContain('<td data-label="Last used">Never</td>');
    // The first-passkey form (password) shows only while there is none; later ones need a step-up.
    expect(page.body).toContain('data-first="false"');
    expect(page.body).not.toContain('id="current_password"');
    await stepUp(a.c, a.auth);
    await post(a.c, 'passkey_revoke', { passkey_id: a.passkeyId });
    const empty = await a.c.get('/profile/security');
    expect(empty.body).toContain('id="no-passkeys"');
    expect(empty.body).toContain('id="current_password"');
  });

  it('escapes labels and says only what it knows after a change', async () => {
    const m = await memberWithPasskey();
    await post(m.c, 'passkey_rename', { passkey_id: m.passkeyId, label: '<script>x</script>' });
    const page = await m.c.get('/profile/security?done=renamed');
    expect(page.body).toContain('&lt;script&gt;x&lt;/script&gt;');
    expect(page.body).toContain('<p class="notice" id="passkey-done">Passkey renamed.</p>');
    const other = await m.c.get('/profile/security?done=%3Cb%3Ehi');
    expect(other.body).not.toContain('id="passkey-done"');
  });

  it('serves the WebAuthn browser library and the page script', async () => {
    for (const [name, marker] of [['simplewebauthn-browser.js', 'SimpleWebAuthnBrowser'], ['passkeys.js', 'passkey_login_options']] as const) {
      const res = await t.request({ method: 'GET', url: `/static/${name}` });
      expect([name, res.statusCode, res.headers['content-type']]).toEqual([name, 200, 'application/javascript; charset=utf-8']);
      expect(res.body).toContain(marker);
    }
  });
});
