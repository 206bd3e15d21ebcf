import type { InjectOptions } from 'fastify';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Writable } from 'node:stream';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bootstrapInitialAdmin } from '../../src/accounts/initial-admin.js';
import { buildApp } from '../../src/boot/app.js';
import { loggerOptions } from '../../src/boot/server.js';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { webClient, type WebClient } from '../helpers/browser-session.js';

// The account pages of issue 40 (part 3), black-box through the real app: registration that signs the
// browser in, the forgotten-password pages with the mailed link, /profile, the password change on
// /profile/security, the initial admin's generated password, and where each kind of user lands.

const BASE_URL = 'https://members.example.org';
const NEUTRAL = 'If an account exists for that email address, a link to reset its password is on its way.';

let t: TestApp;
let ipSeq = 0;
beforeAll(async () => {
  t = await createTestApp({ config: { baseUrl: BASE_URL } });
});
afterAll(async () => t.close());

/** A browser of its own address, so that one test's failed attempts never meet another's limit. */
const browser = () => webClient(t, `10.40.3.${++ipSeq}`);
const action = (c: WebClient, name: string, payload: Record<string, unknown>) => c.api('POST', `/api/v1/action/${name}`, { payload });
const outboxFor = (to: string) => t.services.db.selectFrom('mob_mail_outbox').selectAll().where('mob_to', '=', to).orderBy('mob_mail_outbox_id').execute();
const userRow = (id: number) => t.services.db.selectFrom('usr_users').selectAll().where('usr_user_id', '=', id).executeTakeFirstOrThrow();

/** The website's sign-in form, as a browser without JavaScript posts it; the response. */
async function postLogin(c: WebClient, email: string, password: string, next?: string) {
  const form = await c.get(next === undefined ? '/login' : `/login?next=${encodeURIComponent(next)}`);
  const fields: Record<string, string> = { email, password, form_token: c.formToken(form.body) };
  if (next !== undefined) fields.next = next;
  return c.postForm('/login', fields);
}

async function signedIn(email: string, password: string): Promise<WebClient> {
  const c = browser();
  const res = await postLogin(c, email, password, '/');
  expect(res.statusCode).toBe(303);
  return c;
}

describe('registration on the website', () => {
  const dataNext = (body: string) => /id="register-form" data-next="([^"]*)"/.exec(body)?.[1];

  it('carries a same-origin next to the form and refuses any other, defaulting to /pricing', async () => {
    const c = browser();
    expect(dataNext((await c.get('/register')).body)).toBe('/pricing');
    expect(dataNext((await c.get('/register?next=%2Fcart%3Fx%3D1')).body)).toBe('/cart?x=1');
    for (const evil of ['//evil.example.com/x', 'https://evil.example.com/', '/\\evil.example.com', 'javascript:alert(1)']) {
      expect(dataNext((await c.get(`/register?next=${encodeURIComponent(evil)}`)).body)).toBe('/pricing');
    }
  });

  it('signs the registering browser in: new session cookie and CSRF token, the home page knows the member', async () => {
    const c = browser();
    await c.get('/register');
    const before = { session: c.jar.cookies.get('gatehouse_session'), csrf: c.csrf() };
    const res = await action(c, 'register', { usr_first_name: 'Grace', usr_last_name: 'Hopper', usr_email: 'grace@example.com', password: 'cobol-1959' });
    expect(res.statusCode).toBe(200);
    expect(res.json).toEqual({
      api_version: '1.0',
      success_message: 'Your account has been created and you are signed in.',
      data: { user_id: expect.any(Number), email: 'grace@example.com', signed_in: true },
      redirect: '/pricing',
    });
    expect(c.jar.cookies.get('gatehouse_session')).toBeDefined();
    expect(c.jar.cookies.get('gatehouse_session')).not.toBe(before.session);
    expect(c.csrf()).not.toBe(before.csrf);
    const home = await c.get('/');
    expect(home.body).toContain('Signed in as <strong>Grace Hopper</strong> (grace@example.com)');
    const session = await t.services.db.selectFrom('wss_web_sessions').select('wss_usr_user_id').where('wss_usr_user_id', '=', res.json.data.user_id).execute();
    expect(session).toHaveLength(1);
    // Signed in, /login sends a member on: to next when given, else home.
    expect((await c.get('/login?next=%2Fpricing')).headers.location).toBe('/pricing');
    expect((await c.get('/login')).headers.location).toBe('/');
  });

  it('keeps the browser a guest when registration is refused, with the field error', async () => {
    await t.createUser({ email: 'taken@example.com' });
    const c = browser();
    await c.get('/register');
    const session = c.jar.cookies.get('gatehouse_session');
    const res = await action(c, 'register', { usr_first_name: 'Again', usr_email: 'taken@example.com', password: 'long-enough-1' });
    expect(res.statusCode).toBe(422);
    expect(res.json.errortype).toBe('ValidationError');
    expect(res.json.validation_errors).toEqual({ usr_email: 'is already registered' });
    expect(c.jar.cookies.get('gatehouse_session')).toBe(session);
    expect((await c.get('/')).body).toContain('<a href="/register">register</a>');
    const short = await action(c, 'register', { usr_first_name: 'Short', usr_email: 'short@example.com', password: 'x' });
    expect(short.statusCode).toBe(422);
    expect(short.json.validation_errors).toEqual({ password: 'must be at least 8 characters' });
  });

  it('refuses a page call with a wrong CSRF token; an app without cookie or token is answered as before', async () => {
    const c = browser();
    await c.get('/register');
    const wrong = await c.api('POST', '/api/v1/action/register', { csrf: 'f'.repeat(64), payload: { usr_first_name: 'X', usr_email: 'x1@example.com', password: 'long-enough-1' } });
    expect(wrong.statusCode).toBe(403);
    expect(wrong.json.errortype).toBe('AuthenticationError');
    expect(await t.services.db.selectFrom('usr_users').select('usr_user_id').where('usr_email', '=', 'x1@example.com').execute()).toEqual([]);
    const app = await t.request({ method: 'POST', url: '/api/v1/action/register', payload: { usr_first_name: 'App', usr_email: 'app@example.com', password: 'long-enough-1' }, remoteAddress: '10.40.4.1' });
    expect(app.statusCode).toBe(200);
    expect(app.json.redirect).toBe('/login');
    expect(app.json.data).toEqual({ user_id: expect.any(Number), email: 'app@example.com' });
    expect(app.headers['set-cookie']).toBeUndefined();
    // A page left open after its session ended registers like an app: nothing to sign in.
    const stale = await t.request({
      method: 'POST',
      url: '/api/v1/action/register',
      headers: { cookie: `gatehouse_session=${'ab'.repeat(32)}`, 'x-service-csrf': 'cd'.repeat(32) },
      payload: { usr_first_name: 'Late', usr_email: 'late@example.com', password: 'long-enough-1' },
      remoteAddress: '10.40.4.2',
    });
    expect(stale.statusCode).toBe(200);
    expect(stale.json.redirect).toBe('/login');
    expect(stale.json.data.signed_in).toBeUndefined();
  });
});

describe('forgotten password', () => {
  const linkIn = (text: string) => {
    const m = /(https:\/\/members\.example\.org\/password-reset\?act_code=([0-9a-f]{48}))\n/.exec(text);
    if (!m) throw new Error(`no reset link in: ${text}`);
    return { url: m[1]!, path: m[1]!.slice(BASE_URL.length), code: m[2]! };
  };

  async function requestLink(c: WebClient, email: string) {
    const res = await action(c, 'password_reset_1', { email });
    expect(res.statusCode).toBe(200);
    expect(res.json.success_message).toBe(NEUTRAL);
    return linkIn((await outboxFor(email)).at(-1)!.mob_text);
  }

  it('links "Forgot password?" from /login to a page that asks for the email', async () => {
    const c = browser();
    expect((await c.get('/login')).body).toContain('<a href="/password-reset" id="forgot-password">Forgot password?</a>');
    const page = await c.get('/password-reset');
    expect(page.statusCode).toBe(200);
    expect(page.body).toContain('<form id="reset-request-form" data-action="password_reset_1"');
    expect(page.body).toContain(`data-success="${NEUTRAL}"`);
  });

  it('answers the same for an unknown address and mails nothing to it', async () => {
    const c = browser();
    const res = await action(c, 'password_reset_1', { email: 'nobody-here@example.com' });
    expect(res.statusCode).toBe(200);
    expect(res.json).toEqual({ api_version: '1.0', success_message: NEUTRAL, data: {} });
    expect(await outboxFor('nobody-here@example.com')).toEqual([]);
  });

  it('mails a link to the website page; through it the new password works and the old one stops', async () => {
    const u = await t.createUser({ firstName: 'Reset' });
    const c = browser();
    const link = await requestLink(c, u.email);
    const mail = (await outboxFor(u.email)).at(-1)!;
    expect(mail.mob_template).toBe('password_reset');
    expect(mail.mob_subject).toBe('Reset your Gatehouse password');

    const form = await c.get(link.path);
    expect(form.statusCode).toBe(200);
    expect(form.body).toContain('<form id="reset-password-form" data-action="password_reset_2" data-done="/login?done=password_reset"');
    expect(form.body).toContain(`<input type="hidden" name="act_code" value="${link.code}">`);
    expect(form.headers['referrer-policy']).toBe('no-referrer');

    const mismatch = await action(c, 'password_reset_2', { act_code: link.code, password: 'new-secret-1', password_confirm: 'new-secret-2' });
    expect(mismatch.statusCode).toBe(422);
    expect(mismatch.json.validation_errors).toEqual({ password_confirm: 'does not match the password' });
    const done = await action(c, 'password_reset_2', { act_code: link.code, password: 'new-secret-1', password_confirm: 'new-secret-1' });
    expect(done.statusCode).toBe(200);
    expect(done.json.success_message).toBe('Your password has been changed. Please sign in.');
    // Not signed in by the reset: the member signs in with the new password.
    expect((await c.get('/')).body).toContain('<a href="/login">Sign in</a>');
    const told = await c.get('/login?done=password_reset');
    expect(told.body).toContain('<p class="notice" role="status" id="login-done">Your password has been changed. Sign in with your new password.</p>');
    expect((await c.get('/login?done=%3Cscript%3E')).body).not.toContain('id="login-done"');

    expect((await postLogin(browser(), u.email, u.password)).statusCode).toBe(401);
    const ok = await postLogin(browser(), u.email, 'new-secret-1');
    expect(ok.statusCode).toBe(303);
    expect(ok.headers.location).toBe('/');

    // The link worked once.
    const again = await c.get(link.path);
    expect(again.statusCode).toBe(400);
    expect(again.body).toContain('id="reset-link-invalid"');
    expect(again.body).not.toContain('reset-password-form');
  });

  it('shows the error page for an expired, a superseded and a made-up code', async () => {
    const u = await t.createUser();
    const c = browser();
    const older = await requestLink(c, u.email);
    const newer = await requestLink(c, u.email);
    expect((await c.get(newer.path)).statusCode).toBe(200);
    // One reset retires every other outstanding code of the member.
    expect((await action(c, 'password_reset_2', { act_code: newer.code, password: 'newest-pw-1', password_confirm: 'newest-pw-1' })).statusCode).toBe(200);
    expect((await c.get(older.path)).statusCode).toBe(400);

    const late = await requestLink(c, u.email);
    t.clock.advance(61 * 60_000);
    const expired = await c.get(late.path);
    expect(expired.statusCode).toBe(400);
    expect(expired.body).toContain('This reset link is invalid, already used or expired.');
    expect(expired.body).toContain('<a href="/password-reset">Ask for a new link</a>');

    expect((await c.get(`/password-reset?act_code=${'0'.repeat(48)}`)).statusCode).toBe(400);
    expect((await c.get(`/password-reset?act_code=${'a'.repeat(200)}`)).statusCode).toBe(400);
  });

  it('never writes the code to the log: not the mailed link, not the reset page, not the action', async () => {
    const u = await t.createUser();
    const lines: string[] = [];
    const sink = new Writable({
      write(chunk: Buffer, _enc, cb) {
        lines.push(chunk.toString('utf8'));
        cb();
      },
    });
    const app = await buildApp(t.services, { logger: pino(loggerOptions('trace'), sink) });
    await app.ready();
    try {
      const send = (o: InjectOptions) => app.inject(o);
      const page = await send({ method: 'GET', url: '/password-reset', remoteAddress: '10.40.6.1' });
      const cookie = page.cookies.map((c) => `${c.name}=${c.value}`).join('; ');
      const csrf = page.cookies.find((c) => c.name === 'service_api_csrf')!.value;
      const headers = { cookie, 'x-service-csrf': csrf };
      expect((await send({ method: 'POST', url: '/api/v1/action/password_reset_1', headers, payload: { email: u.email }, remoteAddress: '10.40.6.1' })).statusCode).toBe(200);
      const link = linkIn((await outboxFor(u.email)).at(-1)!.mob_text);
      expect((await send({ method: 'GET', url: link.path, headers: { cookie }, remoteAddress: '10.40.6.1' })).statusCode).toBe(200);
      const done = await send({ method: 'POST', url: '/api/v1/action/password_reset_2', headers, payload: { act_code: link.code, password: 'logged-never-1', password_confirm: 'logged-never-1' }, remoteAddress: '10.40.6.1' });
      expect(done.statusCode).toBe(200);
      const logged = lines.join('');
      expect(logged).toContain('"route":"/password-reset"');
      expect(logged).not.toContain(link.code);
      expect(logged).not.toContain('logged-never-1');
    } finally {
      await app.close();
    }
  });

  it('counts unusable links toward the failed-auth limit, like the action does', async () => {
    await t.services.settings.set('api_auth_rate_limit_requests', 3);
    try {
      const c = browser();
      for (let i = 0; i < 3; i++) expect((await c.get(`/password-reset?act_code=${'1'.repeat(47)}${i}`)).statusCode).toBe(400);
      const limited = await c.get(`/password-reset?act_code=${'2'.repeat(48)}`);
      expect(limited.statusCode).toBe(429);
      expect(limited.headers['retry-after']).toBeDefined();
      expect(limited.body).toContain('Too many failed attempts');
      // The request form itself is not limited.
      expect((await c.get('/password-reset')).statusCode).toBe(200);
    } finally {
      await t.services.settings.set('api_auth_rate_limit_requests', 10);
    }
  });
});

describe('/profile', () => {
  it('sends a visitor to sign in first', async () => {
    const res = await browser().get('/profile');
    expect(res.statusCode).toBe(303);
    expect(res.headers.location).toBe('/login?next=%2Fprofile');
  });

  it('shows the account_edit and address_edit forms prefilled, and saves both through the actions', async () => {
    const u = await t.createUser({ firstName: 'Mary', lastName: 'Shelley' });
    const c = await signedIn(u.email, u.password);
    const page = await c.get('/profile');
    expect(page.statusCode).toBe(200);
    expect(page.body).toContain('<nav class="sub" aria-label="Your account"><a href="/profile" aria-current="page">');
    expect(page.body).toContain('<form id="account-form" data-action="account_edit" data-done="/profile?done=account" novalidate>');
    expect(page.body).toContain('<input id="account-usr_first_name" name="usr_first_name" type="text" value="Mary" required maxlength="32">');
    expect(page.body).toContain(`<input id="account-usr_email" name="usr_email" type="email" value="${u.email}" required maxlength="64" autocomplete="email">`);
    expect(page.body).toContain('<div class="field-error" data-for="usr_email" id="account-usr_email-error"></div>');
    expect(page.body).toContain('<form id="address-form" data-action="address_edit" data-done="/profile?done=address" novalidate>');

    const saved = await action(c, 'account_edit', { usr_first_name: 'Mary W.', usr_last_name: 'Shelley', usr_nickname: '', usr_email: 'mws@example.com', usr_timezone: 'Europe/London', usr_bio: 'Writer' });
    expect(saved.statusCode).toBe(200);
    expect(saved.json.success_message).toBe('Your profile has been saved.');
    const row = await userRow(u.userId);
    expect(row).toMatchObject({ usr_first_name: 'Mary W.', usr_email: 'mws@example.com', usr_timezone: 'Europe/London', usr_bio: 'Writer', usr_email_is_verified: false });
    const after = await c.get('/profile?done=account');
    expect(after.body).toContain('<p class="notice" role="status" id="profile-done">Your profile has been saved.</p>');
    expect(after.body).toContain('value="mws@example.com"');
    expect((await c.get('/profile?done=nonsense')).body).not.toContain('id="profile-done"');

    const address = await action(c, 'address_edit', { usa_users_addr_id: '', usa_address1: '1 Marlow Road', usa_address2: '', usa_city: 'Marlow', usa_state: '', usa_zip_code_id: 'SL7 1AA', usa_is_default: true });
    expect(address.statusCode).toBe(200);
    expect(address.json.data.created).toBe(true);
    const withAddress = await c.get('/profile?done=address');
    expect(withAddress.body).toContain('id="profile-done">Your address has been saved.</p>');
    expect(withAddress.body).toContain('<input id="address-usa_city" name="usa_city" type="text" value="Marlow" required maxlength="64">');
    expect(withAddress.body).toContain(`<input type="hidden" name="usa_users_addr_id" value="${address.json.data.address.address_id}">`);
    // The second save edits the same address.
    const edit = await action(c, 'address_edit', { usa_users_addr_id: String(address.json.data.address.address_id), usa_address1: '2 Marlow Road', usa_city: 'Marlow', usa_is_default: true });
    expect(edit.statusCode).toBe(200);
    expect(edit.json.data.created).toBe(false);
  });

  it('answers the contract field errors the page shows under the fields', async () => {
    const u = await t.createUser();
    const other = await t.createUser();
    const c = await signedIn(u.email, u.password);
    const bad = await action(c, 'account_edit', { usr_first_name: '', usr_email: 'not-an-email' });
    expect(bad.statusCode).toBe(422);
    expect(bad.json.validation_errors).toEqual({ usr_first_name: 'is required', usr_email: 'must be a valid email address' });
    const taken = await action(c, 'account_edit', { usr_first_name: 'Test', usr_email: other.email });
    expect(taken.statusCode).toBe(422);
    expect(taken.json.validation_errors).toEqual({ usr_email: 'is already used by another account' });
    const noCity = await action(c, 'address_edit', { usa_address1: 'Somewhere 1', usa_city: '' });
    expect(noCity.statusCode).toBe(422);
    expect(noCity.json.validation_errors).toEqual({ usa_city: 'is required' });
    expect((await userRow(u.userId)).usr_email).toBe(u.email);
  });
});

describe('password change on /profile/security', () => {
  it('sits beside the passkeys and refuses a wrong current password', async () => {
    const u = await t.createUser();
    const c = await signedIn(u.email, u.password);
    const page = await c.get('/profile/security');
    expect(page.statusCode).toBe(200);
    expect(page.body).toContain('<form id="password-form" data-action="password_edit" data-done="/profile/security?done=password" novalidate>');
    expect(page.body).toContain('<div class="field-error" data-for="current_password"></div>');
    expect(page.body).toContain('id="add-passkey-form"');
    expect(page.body).not.toContain('id="password-change-banner"');

    const wrong = await action(c, 'password_edit', { current_password: 'not-my-password', new_password: 'another-pw-1' });
    expect(wrong.statusCode).toBe(422);
    expect(wrong.json.validation_errors).toEqual({ current_password: 'is incorrect' });
    const short = await action(c, 'password_edit', { current_password: u.password, new_password: 'short' });
    expect(short.statusCode).toBe(422);
    expect(short.json.validation_errors).toEqual({ new_password: 'must be at least 8 characters' });

    const ok = await action(c, 'password_edit', { current_password: u.password, new_password: 'another-pw-1' });
    expect(ok.statusCode).toBe(200);
    // This browser stays signed in and is told.
    const told = await c.get('/profile/security?done=password');
    expect(told.body).toContain('<p class="notice" id="password-done">Your password has been changed.</p>');
    expect((await postLogin(browser(), u.email, u.password)).statusCode).toBe(401);
    expect((await postLogin(browser(), u.email, 'another-pw-1')).statusCode).toBe(303);
  });
});

describe('where sign-in lands', () => {
  it('sends staff to /admin and members home when there is no next; next wins when it is safe', async () => {
    const staff = await t.createUser({ permission: 5 });
    const member = await t.createUser();
    expect((await postLogin(browser(), staff.email, staff.password)).headers.location).toBe('/admin');
    expect((await postLogin(browser(), staff.email, staff.password, '/admin/tiers')).headers.location).toBe('/admin/tiers');
    expect((await postLogin(browser(), staff.email, staff.password, '//evil.example.com/')).headers.location).toBe('/admin');
    expect((await postLogin(browser(), member.email, member.password)).headers.location).toBe('/');
    expect((await postLogin(browser(), member.email, member.password, '/profile')).headers.location).toBe('/profile');
    expect((await postLogin(browser(), member.email, member.password, 'https://evil.example.com/')).headers.location).toBe('/');
  });

  it('sends a passkey sign-in through /login, which lands it the same way', async () => {
    const c = browser();
    expect((await c.get('/login')).body).toContain('<div id="passkey-signin" data-next="/login" hidden>');
    expect((await c.get('/login?next=%2Fprofile')).body).toContain('<div id="passkey-signin" data-next="/login?next=%2Fprofile" hidden>');
    const staff = await t.createUser({ permission: 5 });
    const s = await signedIn(staff.email, staff.password);
    expect((await s.get('/login')).headers.location).toBe('/admin');
  });
});

describe('the initial admin', () => {
  let fresh: TestApp;
  let dataDir: string;
  beforeAll(async () => {
    fresh = await createTestApp();
    dataDir = mkdtempSync(path.join(tmpdir(), 'gatehouse-initial-admin-'));
  });
  afterAll(async () => {
    await fresh.close();
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('is asked to change the generated password at sign-in, on every page until it is changed', async () => {
    const created = await bootstrapInitialAdmin(fresh.services.db, dataDir, fresh.clock.now());
    expect(created).not.toBeNull();
    const admin = JSON.parse(readFileSync(created!.file, 'utf8')) as { user_id: number; email: string; password: string };
    const row = await fresh.services.db.selectFrom('usr_users').select(['usr_force_password_change', 'usr_permission']).where('usr_user_id', '=', admin.user_id).executeTakeFirstOrThrow();
    expect(row).toEqual({ usr_force_password_change: true, usr_permission: 10 });

    const c = webClient(fresh, '10.40.5.1');
    const signIn = await postLogin(c, admin.email, admin.password);
    expect(signIn.statusCode).toBe(303);
    expect(signIn.headers.location).toBe('/profile/security');
    // Even a next waits until the password is changed.
    expect((await postLogin(webClient(fresh, '10.40.5.2'), admin.email, admin.password, '/admin/tiers')).headers.location).toBe('/profile/security');

    const security = await c.get('/profile/security');
    expect(security.body).toContain('<div class="banner" id="password-change-banner" role="alert"><strong>Please change your password.</strong>');
    const dashboard = await c.get('/admin');
    expect(dashboard.statusCode).toBe(200);
    expect(dashboard.body).toContain('id="password-change-banner"');
    expect((await c.get('/login')).headers.location).toBe('/profile/security');

    const changed = await c.api('POST', '/api/v1/action/password_edit', { payload: { current_password: admin.password, new_password: 'my-own-admin-pw' } });
    expect(changed.statusCode).toBe(200);
    expect((await fresh.services.db.selectFrom('usr_users').select('usr_force_password_change').where('usr_user_id', '=', admin.user_id).executeTakeFirstOrThrow()).usr_force_password_change).toBe(false);
    expect((await c.get('/admin')).body).not.toContain('id="password-change-banner"');
    const again = await postLogin(webClient(fresh, '10.40.5.3'), admin.email, 'my-own-admin-pw');
    expect(again.headers.location).toBe('/admin');
  });
});
