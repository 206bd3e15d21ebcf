import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mayActOn } from '../../src/accounts/authority.js';
import { formToken } from '../../src/accounts/web-sessions.js';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { signIn, type WebClient } from '../helpers/browser-session.js';
import { changeRows, createTier, tierMemberships } from '../helpers/tiers.js';

// Issue 22, item 1. A staff member acts on another account (its keys, its tier, its user row, its
// sign-in) only when that account has no more permission than theirs; a superadmin may. One rule,
// mayActOn, behind every such path.

describe('mayActOn', () => {
  const account = (id: number, permission: number) => ({ usr_user_id: id, usr_permission: permission });
  it.each([
    ['a member on their own account', account(1, 0), account(1, 0), true],
    ['a member on another member', account(1, 0), account(2, 0), false],
    ['staff on a member', account(1, 5), account(2, 0), true],
    ['staff on another staff member', account(1, 5), account(2, 5), true],
    ['staff on a superadmin', account(1, 5), account(2, 10), false],
    ['a superadmin on a superadmin', account(1, 10), account(2, 10), true],
    ['a superadmin on staff', account(1, 10), account(2, 5), true],
    ['a permission-4 user on a member', account(1, 4), account(2, 0), false],
  ])('%s: %s', (_name, actor, target, expected) => {
    expect(mayActOn(actor, target)).toBe(expected);
  });
});

describe('staff acting on an account with more permission than theirs', () => {
  let t: TestApp;
  let staff: WebClient;
  let superadmin: WebClient;
  let boss: { userId: number; email: string; password: string };
  let member: { userId: number; email: string; password: string };

  beforeAll(async () => {
    t = await createTestApp();
    const s = await t.createUser({ permission: 5 });
    staff = await signIn(t, s.email, s.password, '192.0.2.60');
    const a = await t.createUser({ permission: 10 });
    superadmin = await signIn(t, a.email, a.password, '192.0.2.61');
    boss = await t.createUser({ permission: 10 });
    member = await t.createUser();
  });
  afterAll(async () => t.close());

  async function token(c: WebClient, form: string) {
    return formToken((await t.services.webSessions.load(c.jar.cookies.get('gatehouse_session')))!, form);
  }
  const keysOf = (userId: number) =>
    t.services.db.selectFrom('apk_api_keys').select(['apk_api_key_id', 'apk_is_active', 'apk_delete_time']).where('apk_usr_user_id', '=', userId).orderBy('apk_api_key_id').execute();
  const createKey = async (c: WebClient, ownerEmail: string) =>
    c.postForm('/admin/api-keys', { form_token: await token(c, 'api-keys'), owner_email: ownerEmail, permission: '4', name: 'ops', ip_restriction: '', start_time: '', expires_time: '', active: '1' });

  describe('API keys (/admin/api-keys)', () => {
    it('refuses staff creating a key owned by a superadmin: 403, the reason by the owner field, nothing created', async () => {
      const before = await keysOf(boss.userId);
      const res = await createKey(staff, boss.email);
      expect(res.statusCode).toBe(403);
      expect(res.body).toMatch(/id="owner_email-error"[^>]*>You cannot create a key for a user with more permission than yours\.</);
      expect(res.body).not.toContain('id="new-secret-key"');
      expect(await keysOf(boss.userId)).toEqual(before);
    });

    it('lets a superadmin create the same key, which then passes the management gates', async () => {
      const res = await createKey(superadmin, boss.email);
      expect(res.statusCode).toBe(200);
      const publicKey = /id="new-public-key">([^<]+)</.exec(res.body)![1]!;
      const secretKey = /id="new-secret-key">([^<]+)</.exec(res.body)![1]!;
      expect((await keysOf(boss.userId)).length).toBe(1);
      const health = await t.request({ method: 'GET', url: '/api/v1/management/health', headers: { public_key: publicKey, secret_key: secretKey } });
      expect(health.statusCode).toBe(200);
    });

    it('lets staff create keys for members and for themselves', async () => {
      expect((await createKey(staff, member.email)).statusCode).toBe(200);
      expect((await keysOf(member.userId)).length).toBe(1);
    });

    it("refuses staff deactivating, activating and revoking a superadmin's key, which keeps working; a superadmin may", async () => {
      const key = await t.createMachineKey({ userId: boss.userId });
      const headers = { public_key: key.publicKey, secret_key: key.secretKey };
      const row = async () => (await keysOf(boss.userId)).find((k) => k.apk_api_key_id === key.apiKeyId)!;
      for (const op of ['deactivate', 'revoke']) {
        const res = await staff.postForm(`/admin/api-keys/${key.apiKeyId}/${op}`, { form_token: await token(staff, 'api-keys') });
        expect(res.statusCode, op).toBe(403);
        expect(res.body).toContain('You cannot change a key of a user with more permission than yours.');
      }
      expect(await row()).toMatchObject({ apk_is_active: true, apk_delete_time: null });
      expect((await t.request({ method: 'GET', url: '/api/v1/auth/session', headers })).statusCode).toBe(200);

      // Staff are not shown the buttons either.
      const list = await staff.get('/admin/api-keys');
      const tr = new RegExp(`<tr data-key="${key.publicKey}">[\\s\\S]*?</tr>`).exec(list.body)![0];
      expect(tr).not.toContain(`/admin/api-keys/${key.apiKeyId}/`);

      // An inactive superadmin key stays inactive against staff.
      await superadmin.postForm(`/admin/api-keys/${key.apiKeyId}/deactivate`, { form_token: await token(superadmin, 'api-keys') });
      expect((await row()).apk_is_active).toBe(false);
      expect((await staff.postForm(`/admin/api-keys/${key.apiKeyId}/activate`, { form_token: await token(staff, 'api-keys') })).statusCode).toBe(403);
      expect((await row()).apk_is_active).toBe(false);

      const revoked = await superadmin.postForm(`/admin/api-keys/${key.apiKeyId}/revoke`, { form_token: await token(superadmin, 'api-keys') });
      expect(revoked.statusCode).toBe(303);
      expect((await row()).apk_delete_time).not.toBeNull();
    });

    it("lets staff revoke a member's key", async () => {
      const key = await t.createMachineKey({ userId: member.userId });
      const res = await staff.postForm(`/admin/api-keys/${key.apiKeyId}/revoke`, { form_token: await token(staff, 'api-keys') });
      expect(res.statusCode).toBe(303);
      expect((await t.request({ method: 'GET', url: '/api/v1/auth/session', headers: { public_key: key.publicKey, secret_key: key.secretKey } })).statusCode).toBe(401);
    });
  });

  describe('tier membership (/admin/tiers/{id}/members)', () => {
    it("refuses staff adding a superadmin to a tier or removing one from it, changing nothing; a superadmin may", async () => {
      const tier = await createTier(t, { name: 'gold', level: 10 });
      const other = await createTier(t, { name: 'silver', level: 5 });
      const target = await t.createUser({ permission: 10 });
      await t.services.tiers.membership.assignManually(target.userId, other.tierId, null);

      const add = await staff.postForm(`/admin/tiers/${tier.tierId}/members`, { form_token: await token(staff, 'tier-members'), user_id: String(target.userId) });
      expect(add.statusCode).toBe(403);
      expect(add.body).toContain('You cannot change the tier of a user with more permission than yours.');
      const remove = await staff.postForm(`/admin/tiers/${other.tierId}/members/${target.userId}/remove`, { form_token: await token(staff, 'tier-members') });
      expect(remove.statusCode).toBe(403);
      expect(remove.body).toContain('You cannot change the tier of a user with more permission than yours.');
      expect((await tierMemberships(t, target.userId)).map((m) => m.grm_sbt_subscription_tier_id)).toEqual([other.tierId]);
      expect(await changeRows(t, target.userId)).toHaveLength(1);

      const byAdmin = await superadmin.postForm(`/admin/tiers/${tier.tierId}/members`, { form_token: await token(superadmin, 'tier-members'), user_id: String(target.userId) });
      expect(byAdmin.statusCode).toBe(303);
      expect((await tierMemberships(t, target.userId)).map((m) => m.grm_sbt_subscription_tier_id)).toEqual([tier.tierId]);
      const removed = await superadmin.postForm(`/admin/tiers/${tier.tierId}/members/${target.userId}/remove`, { form_token: await token(superadmin, 'tier-members') });
      expect(removed.statusCode).toBe(303);
      expect(await tierMemberships(t, target.userId)).toEqual([]);
    });
  });

  describe('login-as (/admin/users/{id}/login-as)', () => {
    it('refuses staff signing in as a superadmin, and lets a superadmin sign in as another', async () => {
      const res = await staff.postForm(`/admin/users/${boss.userId}/login-as`, { form_token: await token(staff, 'login-as') });
      expect(res.statusCode).toBe(403);
      expect((await staff.api('GET', '/api/v1/auth/session')).json.data.user_id).not.toBe(boss.userId);
      const a = await t.createUser({ permission: 10 });
      const other = await signIn(t, a.email, a.password, '192.0.2.62');
      const ok = await other.postForm(`/admin/users/${boss.userId}/login-as`, { form_token: await token(other, 'login-as') });
      expect(ok.statusCode).toBe(303);
      expect((await other.api('GET', '/api/v1/auth/session')).json.data.user_id).toBe(boss.userId);
    });
  });

  describe('User writes over CRUD', () => {
    it("refuses staff changing or deleting a superadmin's user row: 403, the row unchanged", async () => {
      const { headers } = await t.staffHeaders();
      const target = await t.createUser({ permission: 10 });
      const before = await t.services.db.selectFrom('usr_users').selectAll().where('usr_user_id', '=', target.userId).executeTakeFirstOrThrow();
      const put = await t.request({ method: 'PUT', url: `/api/v1/User/${target.userId}?usr_email=taken-over@example.com`, headers });
      expect(put.statusCode).toBe(403);
      expect(put.json).toMatchObject({ errortype: 'AuthenticationError', error: 'Insufficient permission for this record' });
      const del = await t.request({ method: 'DELETE', url: `/api/v1/User/${target.userId}`, headers });
      expect(del.statusCode).toBe(403);
      expect(await t.services.db.selectFrom('usr_users').selectAll().where('usr_user_id', '=', target.userId).executeTakeFirstOrThrow()).toEqual(before);
    });

    it("lets a superadmin change a superadmin's row and staff change a member's", async () => {
      const target = await t.createUser({ permission: 10 });
      const admin = await t.staffHeaders({ userPermission: 10 });
      const put = await t.request({ method: 'PUT', url: `/api/v1/User/${target.userId}?usr_nickname=chief`, headers: admin.headers });
      expect(put.statusCode, put.body).toBe(200);
      expect(put.json.data.usr_nickname).toBe('chief');
      const { headers } = await t.staffHeaders();
      const m = await t.request({ method: 'PUT', url: `/api/v1/User/${member.userId}?usr_nickname=member`, headers });
      expect(m.statusCode, m.body).toBe(200);
    });

    it('lets a member change their own row and no one else’s', async () => {
      const own = await t.keyHeaders();
      expect((await t.request({ method: 'PUT', url: `/api/v1/User/${own.userId}?usr_nickname=me`, headers: own.headers })).statusCode).toBe(200);
      expect((await t.request({ method: 'PUT', url: `/api/v1/User/${member.userId}?usr_nickname=you`, headers: own.headers })).statusCode).toBe(403);
    });
  });
});
