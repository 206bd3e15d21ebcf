import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { formToken } from '../../src/accounts/web-sessions.js';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { signIn, webClient, type WebClient } from '../helpers/browser-session.js';

const ADMIN_PAGES = ['/admin/api-keys', '/admin/settings/subscriptions'];

describe('admin and profile screens', () => {
  let t: TestApp;
  let staff: WebClient;
  beforeAll(async () => {
    t = await createTestApp();
    const s = await t.createUser({ permission: 5 });
    staff = await signIn(t, s.email, s.password);
  });
  afterAll(async () => t.close());

  async function token(c: WebClient, form: string) {
    return formToken((await t.services.webSessions.load(c.jar.cookies.get('gatehouse_session')))!, form);
  }

  it('sends anonymous visitors to sign-in and answers 403 to signed-in non-staff on every admin page', async () => {
    const m = await t.createUser();
    const member = await signIn(t, m.email, m.password);
    for (const url of ADMIN_PAGES) {
      const anon = await webClient(t).get(url);
      expect(anon.statusCode, url).toBe(303);
      expect(anon.headers.location).toBe(`/login?next=${encodeURIComponent(url)}`);
      expect((await member.get(url)).statusCode, url).toBe(403);
      expect((await staff.get(url)).statusCode, url).toBe(200);
    }
    const post = await member.postForm('/admin/settings/subscriptions', { form_token: await token(member, 'subscription-settings'), tier_gate_preview_length: '5' });
    expect(post.statusCode).toBe(403);
    expect(t.services.settings.int('tier_gate_preview_length')).toBe(0);
    // Nor can a member deactivate or revoke anyone's key, their own included.
    const victim = await t.keyHeaders();
    const victimId = (await t.services.db.selectFrom('apk_api_keys').select('apk_api_key_id').where('apk_public_key', '=', victim.headers.public_key!).executeTakeFirstOrThrow()).apk_api_key_id;
    for (const op of ['deactivate', 'revoke']) {
      const res = await member.postForm(`/admin/api-keys/${victimId}/${op}`, { form_token: await token(member, 'api-keys') });
      expect(res.statusCode, op).toBe(403);
    }
    expect((await t.request({ method: 'GET', url: '/api/v1/auth/session', headers: victim.headers })).statusCode).toBe(200);
  });

  it('creates a machine key, showing the secret once, that authenticates; revoke stops it', async () => {
    const owner = await t.createUser();
    const res = await staff.postForm('/admin/api-keys', {
      form_token: await token(staff, 'api-keys'),
      owner_email: owner.email,
      permission: '3',
      name: 'Reporting',
      ip_restriction: '',
      start_time: '',
      expires_time: '',
      active: '1',
    });
    expect(res.statusCode).toBe(200);
    const publicKey = /id="new-public-key">([^<]+)</.exec(res.body)![1]!;
    const secretKey = /id="new-secret-key">([^<]+)</.exec(res.body)![1]!;
    const call = await t.request({ method: 'GET', url: '/api/v1/auth/session', headers: { public_key: publicKey, secret_key: secretKey } });
    expect(call.statusCode).toBe(200);
    expect(call.json.data.user_id).toBe(owner.userId);
    const list = await staff.get('/admin/api-keys');
    expect(list.body).toContain(publicKey);
    expect(list.body).not.toContain(secretKey);
    const row = await t.services.db.selectFrom('apk_api_keys').select(['apk_api_key_id', 'apk_permission', 'apk_name']).where('apk_public_key', '=', publicKey).executeTakeFirstOrThrow();
    expect(row).toMatchObject({ apk_permission: 3, apk_name: 'Reporting' });
    await staff.postForm(`/admin/api-keys/${row.apk_api_key_id}/deactivate`, { form_token: await token(staff, 'api-keys') });
    expect((await t.request({ method: 'GET', url: '/api/v1/auth/session', headers: { public_key: publicKey, secret_key: secretKey } })).statusCode).toBe(401);
    await staff.postForm(`/admin/api-keys/${row.apk_api_key_id}/activate`, { form_token: await token(staff, 'api-keys') });
    expect((await t.request({ method: 'GET', url: '/api/v1/auth/session', headers: { public_key: publicKey, secret_key: secretKey } })).statusCode).toBe(200);
    await staff.postForm(`/admin/api-keys/${row.apk_api_key_id}/revoke`, { form_token: await token(staff, 'api-keys') });
    expect((await t.request({ method: 'GET', url: '/api/v1/auth/session', headers: { public_key: publicKey, secret_key: secretKey } })).statusCode).toBe(401);
  });

  it('shows each bad field of the key form next to the field and creates nothing', async () => {
    const before = await t.services.db.selectFrom('apk_api_keys').select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow();
    const res = await staff.postForm('/admin/api-keys', {
      form_token: await token(staff, 'api-keys'),
      owner_email: 'nobody@example.com',
      permission: '7',
      ip_restriction: 'not an ip',
      start_time: '2026-13-01 00:00:00',
      expires_time: 'tomorrow',
    });
    expect(res.statusCode).toBe(400);
    for (const f of ['owner_email', 'permission', 'ip_restriction', 'start_time', 'expires_time']) expect(res.body, f).toContain(`id="${f}-error"`);
    const after = await t.services.db.selectFrom('apk_api_keys').select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow();
    expect(after.n).toBe(before.n);
  });

  it('saves typed subscription settings, and refuses a bad value without saving anything', async () => {
    const bad = await staff.postForm('/admin/settings/subscriptions', {
      form_token: await token(staff, 'subscription-settings'),
      subscription_cancellation_timing: 'immediate',
      tier_gate_preview_length: '-3',
      tier_upgrade_url: 'ftp://nope',
    });
    expect(bad.statusCode).toBe(400);
    expect(bad.body).toContain('id="tier_gate_preview_length-error"');
    expect(bad.body).toContain('id="tier_upgrade_url-error"');
    expect(t.services.settings.string('subscription_cancellation_timing')).toBe('end_of_period');
    const ok = await staff.postForm('/admin/settings/subscriptions', {
      form_token: await token(staff, 'subscription-settings'),
      subscription_downgrades_enabled: 'false',
      subscription_cancellation_timing: 'immediate',
      subscription_cancellation_prorate: 'true',
      tier_gate_preview_length: '120',
      tier_upgrade_url: 'https://members.example.com/upgrade',
    });
    // POST-redirect-GET with a one-time notice: the next page shows it, a reload does not.
    expect(ok.statusCode).toBe(303);
    expect(ok.headers.location).toBe('/admin/settings/subscriptions');
    expect((await staff.get('/admin/settings/subscriptions')).body).toContain('<p class="notice" role="status" id="settings-saved">Settings saved.</p>');
    expect((await staff.get('/admin/settings/subscriptions')).body).not.toContain('Settings saved.');
    expect(t.services.settings.bool('subscription_downgrades_enabled')).toBe(false);
    expect(t.services.settings.string('subscription_cancellation_timing')).toBe('immediate');
    expect(t.services.settings.bool('subscription_cancellation_prorate')).toBe(true);
    expect(t.services.settings.int('tier_gate_preview_length')).toBe(120);
    expect(t.services.settings.string('tier_upgrade_url')).toBe('https://members.example.com/upgrade');
  });

  it('lists a member’s own app sessions and revokes one, which stops the key', async () => {
    const m = await t.createUser();
    const phone = await t.request({ method: 'POST', url: '/api/v1/auth/login', payload: { email: m.email, password: m.password, device_label: 'Pixel' } });
    const other = await t.createUser();
    const otherKey = await t.login(other.email, other.password);
    const web = await signIn(t, m.email, m.password);
    const page = await web.get('/profile/app-sessions');
    expect(page.body).toContain('Pixel');
    const id = /data-id="(\d+)"/.exec(page.body)![1];
    // Someone else's key id is not revocable from this view.
    const otherId = (await t.services.db.selectFrom('apk_api_keys').select('apk_api_key_id').where('apk_public_key', '=', otherKey.headers.public_key!).executeTakeFirstOrThrow()).apk_api_key_id;
    await web.postForm(`/profile/app-sessions/${otherId}/revoke`, { form_token: await token(web, 'app-sessions') });
    expect((await t.request({ method: 'GET', url: '/api/v1/auth/session', headers: otherKey.headers })).statusCode).toBe(200);
    await web.postForm(`/profile/app-sessions/${id}/revoke`, { form_token: await token(web, 'app-sessions') });
    const res = await t.request({ method: 'GET', url: '/api/v1/auth/session', headers: { public_key: phone.json.data.public_key, secret_key: phone.json.data.secret_key } });
    expect(res.statusCode).toBe(401);
    expect((await web.get('/profile/app-sessions')).body).toContain('No apps are signed in');
  });
});
