import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { signIn, webClient } from '../helpers/browser-session.js';

const SESSION = '/api/v1/auth/session';

describe('website sign-in', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp();
  });
  afterAll(async () => t.close());

  it('serves a sign-in form usable without JavaScript, with a per-form token distinct from the session token', async () => {
    const c = webClient(t);
    const res = await c.get('/login');
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toContain('text/html');
    expect(res.body).toContain('<form method="post" action="/login"');
    expect(res.body).toContain('<label for="email">');
    const meta = /<meta name="service-api-csrf" content="([0-9a-f]+)">/.exec(res.body)?.[1];
    expect(meta).toBe(c.csrf());
    expect(c.formToken(res.body)).not.toBe(c.csrf());
    expect(res.headers['x-frame-options']).toBe('DENY');
  });

  it('sets an HttpOnly, SameSite=Lax session cookie and a readable mirror cookie; Secure over HTTPS', async () => {
    const res = await t.request({ method: 'GET', url: '/login', remoteAddress: '127.0.0.1' });
    const session = res.cookies.find((c) => c.name === 'gatehouse_session')!;
    const mirror = res.cookies.find((c) => c.name === 'service_api_csrf')!;
    expect(session.httpOnly).toBe(true);
    expect(session.sameSite).toBe('Lax');
    expect(mirror.httpOnly).toBeFalsy();
    const t2 = await createTestApp({ config: { trustProxy: ['10.0.0.1'] } });
    try {
      const secure = await t2.request({ method: 'GET', url: '/login', remoteAddress: '10.0.0.1', headers: { 'x-forwarded-proto': 'https' } });
      expect(secure.cookies.find((c) => c.name === 'gatehouse_session')!.secure).toBe(true);
    } finally {
      await t2.close();
    }
  });

  it('signs in, rotating the session id and the CSRF token', async () => {
    const { email, password } = await t.createUser();
    const c = webClient(t);
    const form = await c.get('/login');
    const before = { session: c.jar.cookies.get('gatehouse_session'), csrf: c.csrf() };
    const res = await c.postForm('/login', { email, password, form_token: c.formToken(form.body), next: '/profile/subscription' });
    expect(res.statusCode).toBe(303);
    expect(res.headers.location).toBe('/profile/subscription');
    expect(c.jar.cookies.get('gatehouse_session')).not.toBe(before.session);
    expect(c.csrf()).not.toBe(before.csrf);
    const home = await c.get('/');
    expect(home.body).toContain(email);
    // The pre-sign-in cookie is dead.
    const old = await t.request({ method: 'GET', url: SESSION, headers: { cookie: `gatehouse_session=${before.session}`, 'x-service-csrf': before.csrf } });
    expect(old.statusCode).toBe(401);
  });

  it('refuses a wrong password with a page-level error and no session change', async () => {
    const { email } = await t.createUser();
    const c = webClient(t, '198.51.100.9');
    const form = await c.get('/login');
    const res = await c.postForm('/login', { email, password: 'not-the-password', form_token: c.formToken(form.body) });
    expect(res.statusCode).toBe(401);
    expect(res.body).toContain('Invalid email or password.');
  });

  it('refuses a sign-in without the per-form token', async () => {
    const { email, password } = await t.createUser();
    const c = webClient(t);
    await c.get('/login');
    const res = await c.postForm('/login', { email, password, form_token: c.csrf() });
    expect(res.statusCode).toBe(403);
  });

  it('never redirects off-site after sign-in', async () => {
    const { email, password } = await t.createUser();
    const c = webClient(t);
    const form = await c.get('/login');
    const res = await c.postForm('/login', { email, password, form_token: c.formToken(form.body), next: '//evil.example.com/x' });
    expect(res.headers.location).toBe('/');
  });

  it('signs out and the old cookie stops working', async () => {
    const { email, password } = await t.createUser();
    const c = await signIn(t, email, password);
    const cookie = c.jar.cookies.get('gatehouse_session');
    const csrf = c.csrf();
    const home = await c.get('/');
    const res = await c.postForm('/logout', { form_token: c.formToken(home.body, '/logout') });
    expect(res.statusCode).toBe(303);
    const after = await t.request({ method: 'GET', url: SESSION, headers: { cookie: `gatehouse_session=${cookie}`, 'x-service-csrf': csrf } });
    expect(after.statusCode).toBe(401);
  });

  it('lets staff sign in as a member, recording the staff identity', async () => {
    const staff = await t.createUser({ permission: 5 });
    const member = await t.createUser();
    const c = await signIn(t, staff.email, staff.password);
    const home = await c.get('/');
    expect(home.body).not.toContain('login-as');
    const { formToken } = await import('../../src/accounts/web-sessions.js');
    const session = (await t.services.webSessions.load(c.jar.cookies.get('gatehouse_session')))!;
    const res = await c.postForm(`/admin/users/${member.userId}/login-as`, { form_token: formToken(session, 'login-as') });
    expect(res.statusCode).toBe(303);
    const who = await c.api('GET', SESSION);
    expect(who.json.data.user_id).toBe(member.userId);
    const row = await t.services.db.selectFrom('wss_web_sessions').selectAll().where('wss_usr_user_id', '=', member.userId).where('wss_delete_time', 'is', null).executeTakeFirstOrThrow();
    expect(row.wss_login_as_usr_user_id).toBe(staff.userId);
    // A member cannot do it.
    const m = await signIn(t, member.email, member.password);
    const ms = (await t.services.webSessions.load(m.jar.cookies.get('gatehouse_session')))!;
    expect((await m.postForm(`/admin/users/${staff.userId}/login-as`, { form_token: formToken(ms, 'login-as') })).statusCode).toBe(403);
  });

  it('ends a session left idle past web_session_idle_minutes', async () => {
    const { email, password } = await t.createUser();
    const c = await signIn(t, email, password);
    expect((await c.api('GET', SESSION)).statusCode).toBe(200);
    t.clock.advanceSeconds(24 * 3600);
    expect((await c.api('GET', SESSION)).statusCode).toBe(401);
    t.clock.advanceSeconds(-24 * 3600);
  });
});

describe('website session lifetime', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp({ settings: { web_session_lifetime_hours: 2, web_session_idle_minutes: 60 } });
  });
  afterAll(async () => t.close());

  it('ends a session at its absolute lifetime even while it is in use, and the cookie says so', async () => {
    const { email, password } = await t.createUser();
    const c = webClient(t);
    const form = await c.get('/login');
    const res = await c.postForm('/login', { email, password, form_token: c.formToken(form.body) });
    expect(res.statusCode).toBe(303);
    expect(res.cookies.find((k) => k.name === 'gatehouse_session')!.maxAge).toBe(2 * 3600);
    // Used every 50 minutes, it never goes idle, but it still ends after 2 hours.
    for (let i = 0; i < 2; i++) {
      t.clock.advanceSeconds(50 * 60);
      expect((await c.api('GET', SESSION)).statusCode, `after ${(i + 1) * 50} minutes`).toBe(200);
    }
    t.clock.advanceSeconds(19 * 60);
    expect((await c.api('GET', SESSION)).statusCode).toBe(200);
    t.clock.advanceSeconds(60);
    const ended = await c.api('GET', SESSION);
    expect(ended.statusCode).toBe(401);
    expect(ended.json.errortype).toBe('AuthenticationError');
  });

  it('ends a session idle for web_session_idle_minutes, and not a minute before', async () => {
    const { email, password } = await t.createUser();
    const c = await signIn(t, email, password);
    t.clock.advanceSeconds(59 * 60);
    expect((await c.api('GET', SESSION)).statusCode).toBe(200);
    t.clock.advanceSeconds(60 * 60);
    expect((await c.api('GET', SESSION)).statusCode).toBe(401);
  });
});

describe('the browser-session credential on the API', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp();
  });
  afterAll(async () => t.close());

  it('accepts the session cookie with X-Service-Csrf equal to the session token, as capability 4', async () => {
    const { userId, email, password } = await t.createUser();
    const c = await signIn(t, email, password);
    const res = await c.api('GET', SESSION);
    expect(res.statusCode).toBe(200);
    expect(res.json.data.user_id).toBe(userId);
    expect(res.cookies.find((k) => k.name === 'service_api_csrf')?.value).toBe(c.csrf());
  });

  it('gives 403 AuthenticationError for a missing or wrong CSRF token even with a valid cookie', async () => {
    const { email, password } = await t.createUser();
    const c = await signIn(t, email, password);
    for (const csrf of [null, 'wrong', `${c.csrf()}x`]) {
      const res = await c.api('GET', SESSION, { csrf });
      expect(res.statusCode, String(csrf)).toBe(403);
      expect(res.json.errortype).toBe('AuthenticationError');
    }
  });

  it('lets key headers take precedence over any cookie', async () => {
    const { email, password } = await t.createUser();
    const c = await signIn(t, email, password);
    const { headers, userId } = await t.keyHeaders();
    const res = await c.api('GET', SESSION, { csrf: null, headers });
    expect(res.statusCode).toBe(200);
    expect(res.json.data.user_id).toBe(userId);
    const bad = await c.api('GET', SESSION, { headers: { public_key: headers.public_key!, secret_key: 'nope' } });
    expect(bad.statusCode).toBe(401);
  });

  it('treats a session with no signed-in user as the anonymous principal, denied 401', async () => {
    const c = webClient(t);
    await c.get('/login');
    const res = await c.api('GET', SESSION);
    expect(res.statusCode).toBe(401);
    expect(res.json.errortype).toBe('AuthenticationError');
  });

  it('refuses auth/logout from a browser session with 403', async () => {
    const { email, password } = await t.createUser();
    const c = await signIn(t, email, password);
    const res = await c.api('POST', '/api/v1/auth/logout');
    expect(res.statusCode).toBe(403);
    expect(res.json.errortype).toBe('AuthenticationError');
    expect((await c.api('GET', SESSION)).statusCode).toBe(200);
  });

  it('gives 401 for a cookie naming no live session', async () => {
    const res = await t.request({ method: 'GET', url: SESSION, headers: { cookie: `gatehouse_session=${'a'.repeat(64)}`, 'x-service-csrf': 'x' } });
    expect(res.statusCode).toBe(401);
  });
});

describe('metering of browser sessions', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp({
      settings: { api_session_rate_limit_requests: 3, api_session_rate_limit_window: 3600, api_rate_limit_requests: 4, api_rate_limit_window: 3600 },
    });
  });
  afterAll(async () => t.close());

  it('meters signed-in browser requests per user, not against the shared per-IP budget', async () => {
    const office = '192.0.2.80';
    const a = await t.createUser();
    const b = await t.createUser();
    const ca = await signIn(t, a.email, a.password, office);
    const cb = await signIn(t, b.email, b.password, office);
    for (let i = 0; i < 3; i++) expect((await ca.api('GET', SESSION)).statusCode).toBe(200);
    const limited = await ca.api('GET', SESSION);
    expect(limited.statusCode).toBe(429);
    expect(limited.json.data).toMatchObject({ limit: 3, window_seconds: 3600, count: 3 });
    // Another member behind the same address still has a budget of their own.
    for (let i = 0; i < 3; i++) expect((await cb.api('GET', SESSION)).statusCode).toBe(200);
    t.clock.advanceSeconds(3600);
    expect((await ca.api('GET', SESSION)).statusCode).toBe(200);
  });

  it('meters the anonymous principal by IP with the general bucket', async () => {
    const ip = '192.0.2.81';
    const guest = webClient(t, ip);
    await guest.get('/login');
    for (let i = 0; i < 4; i++) expect((await guest.api('GET', SESSION)).statusCode).toBe(401);
    const res = await guest.api('GET', SESSION);
    expect(res.statusCode).toBe(429);
    expect(res.json.data.limit).toBe(4);
  });
});

// Issue 22, item 8.
describe('browser sessions: handshake exemption, the mirror cookie on every response, CSRF guesses, disabled users', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp({ settings: { api_min_client_versions: { ios: '2.0.0' }, api_auth_rate_limit_requests: 3, api_auth_rate_limit_window: 900 } });
  });
  afterAll(async () => t.close());

  const OLD_APP = { client_app: 'ios', client_version: '1.0.0' };

  it('does not hold a browser-session request to the client-version handshake, even when it sends client_app', async () => {
    const u = await t.createUser();
    const c = await signIn(t, u.email, u.password, '192.0.2.90');
    const res = await c.api('GET', SESSION, { headers: OLD_APP });
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json.data.user_id).toBe(u.userId);
    // A keyed request with the same headers is an app build: refused.
    const { headers } = await t.keyHeaders();
    const keyed = await t.request({ method: 'GET', url: SESSION, headers: { ...headers, ...OLD_APP } });
    expect(keyed.statusCode).toBe(426);
    expect(keyed.json.errortype).toBe('UpgradeRequired');
    // So is an app's own key-less call that carries a bridged cookie but no CSRF header (not the browser credential).
    const login = await t.request({ method: 'POST', url: '/api/v1/auth/login', headers: { cookie: c.jar.header(), ...OLD_APP }, payload: { email: u.email, password: u.password } });
    expect(login.statusCode).toBe(426);
  });

  it('sets the service_api_csrf mirror cookie on every website response to an anonymous visitor, matching its session', async () => {
    for (const url of ['/login', '/', '/register', '/no/such/page', '/admin/api-keys']) {
      const res = await t.request({ method: 'GET', url, remoteAddress: '192.0.2.91' });
      const mirror = res.cookies.find((k) => k.name === 'service_api_csrf');
      const session = res.cookies.find((k) => k.name === 'gatehouse_session');
      expect(mirror?.value, url).toMatch(/^[0-9a-f]{32,}$/);
      expect(session?.value, url).toBeTruthy();
      expect((await t.services.webSessions.load(session!.value))!.csrfToken, url).toBe(mirror!.value);
    }
    // A page's script then has its token from the first answer: the guest session is the browser credential.
    const c = webClient(t, '192.0.2.91');
    await c.get('/no/such/page');
    const guest = await c.api('GET', SESSION);
    expect(guest.statusCode).toBe(401);
    expect(guest.json.error).not.toMatch(/CSRF/);
  });

  it('mirrors the session an API request carries, and hands no session to a keyed client without a cookie', async () => {
    const u = await t.createUser();
    const c = await signIn(t, u.email, u.password, '192.0.2.92');
    // A public endpoint that never looks at the session still mirrors it.
    const res = await t.request({ method: 'GET', url: '/api/v1/actions', headers: { cookie: c.jar.header() }, remoteAddress: '192.0.2.92' });
    expect(res.statusCode).toBe(200);
    expect(res.cookies.find((k) => k.name === 'service_api_csrf')?.value).toBe(c.csrf());
    const { headers } = await t.keyHeaders();
    const keyed = await t.request({ method: 'GET', url: SESSION, headers });
    expect(keyed.statusCode).toBe(200);
    expect(keyed.cookies).toEqual([]);
  });

  it('counts wrong CSRF tokens with a valid cookie toward the failed-auth limit: 429 after it, whatever is sent next', async () => {
    const ip = '192.0.2.93';
    const u = await t.createUser();
    const c = await signIn(t, u.email, u.password, ip);
    for (let i = 0; i < 3; i++) {
      const res = await c.api('GET', SESSION, { csrf: `${'0'.repeat(63)}${i}` });
      expect(res.statusCode).toBe(403);
      expect(res.json).toMatchObject({ errortype: 'AuthenticationError', error: 'Missing or wrong CSRF token' });
    }
    const limited = await c.api('GET', SESSION);
    expect(limited.statusCode).toBe(429);
    expect(limited.json.errortype).toBe('RateLimitError');
    expect(limited.json.data).toMatchObject({ limit: 3, window_seconds: 900, count: 3 });
    expect(limited.headers['retry-after']).toBeDefined();
    t.clock.advanceSeconds(901);
    expect((await c.api('GET', SESSION)).statusCode).toBe(200);
  });

  it('does not count a missing CSRF header (a page opened from the address bar sends none)', async () => {
    const u = await t.createUser();
    const c = await signIn(t, u.email, u.password, '192.0.2.94');
    for (let i = 0; i < 5; i++) expect((await c.api('GET', SESSION, { csrf: null })).statusCode).toBe(403);
    expect((await c.api('GET', SESSION)).statusCode).toBe(200);
  });

  it('refuses the web-session bridge to a user disabled after the bridge was issued, and signs a disabled user out of pages', async () => {
    const u = await t.createUser();
    const { headers } = await t.login(u.email, u.password);
    const issued = await t.request({ method: 'POST', url: '/api/v1/auth/web_session', headers, payload: { target: '/profile/subscription' } });
    expect(issued.statusCode).toBe(200);
    await t.services.db.updateTable('usr_users').set({ usr_is_disabled: true }).where('usr_user_id', '=', u.userId).execute();
    const c = webClient(t, '192.0.2.95');
    const bridged = await c.get(issued.json.data.bridge_url);
    expect(bridged.statusCode).toBe(410);
    const sessions = await t.services.db.selectFrom('wss_web_sessions').select('wss_web_session_id').where('wss_usr_user_id', '=', u.userId).execute();
    expect(sessions).toEqual([]);

    // A web session a user already has stops being theirs on pages once the account is disabled.
    const v = await t.createUser();
    const signedIn = await signIn(t, v.email, v.password, '192.0.2.95');
    expect((await signedIn.get('/profile/subscription')).statusCode).toBe(200);
    await t.services.db.updateTable('usr_users').set({ usr_is_disabled: true }).where('usr_user_id', '=', v.userId).execute();
    const page = await signedIn.get('/profile/subscription');
    expect(page.statusCode).toBe(303);
    expect(page.headers.location).toMatch(/^\/login/);
  });
});
