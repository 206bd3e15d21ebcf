import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { formToken } from '../../src/accounts/web-sessions.js';
import type { CliContext } from '../../src/cli/context.js';
import { userCommand } from '../../src/cli/user.js';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { signIn, type WebClient } from '../helpers/browser-session.js';
import { eventMark, eventsSince, typesSince } from '../helpers/event-log.js';
import { createTier, type TestTier } from '../helpers/tiers.js';

/**
 * The event log (DESIGN 15) for members, staff tier assignments and posts: registration, profile edits
 * (actions and CRUD), deletion, manual tier changes and publication write their event in the change's
 * transaction; a refused change writes none; a scheduled publication is written once.
 */
const FORM = { 'content-type': 'application/x-www-form-urlencoded' };
const MEMBER_KEYS = ['contact_preferences', 'email', 'first_name', 'is_disabled', 'last_name', 'nickname', 'permission', 'user_id'];

let t: TestApp;
beforeAll(async () => {
  t = await createTestApp({ start: '2026-03-01T12:00:00Z' });
});
afterAll(async () => t.close());
beforeEach(() => t.clock.set('2026-03-01T12:00:00Z'));

const action = (name: string, payload: Record<string, unknown>, headers: Record<string, string> = {}) =>
  t.request({ method: 'POST', url: `/api/v1/action/${name}`, headers, payload });

describe('members', () => {
  it('register writes member.created with the member fields; a refused registration writes nothing', async () => {
    const mark = await eventMark(t);
    const res = await action('register', { usr_first_name: 'Ada', usr_last_name: 'Lovelace', usr_email: 'ada@example.com', password: 'correct horse battery' });
    expect(res.statusCode, res.body).toBe(200);
    const userId = res.json.data.user_id;
    const events = await eventsSince(t, mark);
    expect(events.map((e) => e.type)).toEqual(['member.created']);
    expect(events[0]).toMatchObject({ userId, api_version: '1.0', timestamp: '2026-03-01 12:00:00' });
    expect(events[0]!.data).toEqual({
      user_id: userId,
      email: 'ada@example.com',
      first_name: 'Ada',
      last_name: 'Lovelace',
      nickname: null,
      permission: 0,
      is_disabled: false,
      contact_preferences: null,
    });

    const again = await action('register', { usr_first_name: 'Eve', usr_email: 'ada@example.com', password: 'correct horse battery' });
    expect(again.statusCode).toBe(422);
    expect(await typesSince(t, events[0]!.rowId)).toEqual([]);
  });

  it('the CLI `user create` writes member.created (the same createUser as every other path)', async () => {
    const ctx = { withServices: (fn: (s: typeof t.services, applied: string[]) => Promise<unknown>) => fn(t.services, []) } as unknown as CliContext;
    const mark = await eventMark(t);
    const out = (await userCommand.run(['create', '--email', 'cli-member@example.com', '--password', 'correct horse battery', '--permission', '5'], ctx)) as { user_id: number };
    const events = await eventsSince(t, mark);
    expect(events.map((e) => e.type)).toEqual(['member.created']);
    expect(events[0]!.data).toMatchObject({ user_id: out.user_id, email: 'cli-member@example.com', first_name: 'cli-member', permission: 5 });
  });

  it('account_edit writes member.updated with previous holding the old values of what changed, and nothing when nothing changed', async () => {
    const { headers, userId } = await t.keyHeaders();
    const before = await t.services.db.selectFrom('usr_users').select(['usr_email', 'usr_first_name', 'usr_last_name']).where('usr_user_id', '=', userId).executeTakeFirstOrThrow();
    let mark = await eventMark(t);
    const edit = (o: Record<string, unknown>) => action('account_edit', { usr_first_name: before.usr_first_name, usr_email: before.usr_email, ...o }, headers);
    const res = await edit({ usr_first_name: 'Grace', usr_last_name: 'Hopper', usr_email: `grace-${userId}@example.com` });
    expect(res.statusCode, res.body).toBe(200);
    const events = await eventsSince(t, mark);
    expect(events.map((e) => e.type)).toEqual(['member.updated']);
    expect(events[0]!.userId).toBe(userId);
    expect(Object.keys(events[0]!.data).sort()).toEqual([...MEMBER_KEYS, 'changed', 'previous'].sort());
    expect(events[0]!.data).toMatchObject({ user_id: userId, email: `grace-${userId}@example.com`, first_name: 'Grace', last_name: 'Hopper' });
    expect(events[0]!.data.changed).toEqual(['email', 'first_name', 'last_name']);
    expect(events[0]!.data.previous).toEqual({ email: before.usr_email, first_name: before.usr_first_name, last_name: before.usr_last_name });

    mark = await eventMark(t);
    const same = await edit({ usr_first_name: 'Grace', usr_last_name: 'Hopper', usr_email: `grace-${userId}@example.com` });
    expect(same.statusCode).toBe(200);
    expect(await typesSince(t, mark)).toEqual([]);

    // An address another account holds is refused: no event.
    const other = await t.createUser();
    mark = await eventMark(t);
    const taken = await edit({ usr_first_name: 'Grace', usr_email: other.email });
    expect(taken.statusCode).toBe(422);
    expect(await typesSince(t, mark)).toEqual([]);
  });

  it('contact_preferences writes member.updated naming contact_preferences', async () => {
    const { headers, userId } = await t.keyHeaders();
    const mark = await eventMark(t);
    const res = await action('contact_preferences', { contact_preferences: ['email', 'sms'] }, headers);
    expect(res.statusCode, res.body).toBe(200);
    const events = await eventsSince(t, mark);
    expect(events.map((e) => e.type)).toEqual(['member.updated']);
    expect(events[0]!.data).toMatchObject({ user_id: userId, contact_preferences: 'email,sms', changed: ['contact_preferences'], previous: { contact_preferences: null } });
  });

  it('CRUD User: create writes member.created, a change member.updated, delete member.deleted; a refused write writes nothing', async () => {
    const staff = await t.staffHeaders({ userPermission: 10 });
    const other = await t.createUser();
    let mark = await eventMark(t);
    const made = await t.request({ method: 'POST', url: '/api/v1/User', headers: { ...staff.headers, ...FORM }, payload: 'usr_first_name=Crud&usr_email=crud-user%40example.com' });
    expect(made.statusCode, made.body).toBe(200);
    const userId = made.json.data.usr_user_id;
    let events = await eventsSince(t, mark);
    expect(events.map((e) => e.type)).toEqual(['member.created']);
    expect(events[0]!.data).toMatchObject({ user_id: userId, email: 'crud-user@example.com', first_name: 'Crud', permission: 0 });

    mark = await eventMark(t);
    const put = await t.request({ method: 'PUT', url: `/api/v1/User/${userId}?usr_nickname=cruddy&usr_bio=hello`, headers: staff.headers });
    expect(put.statusCode, put.body).toBe(200);
    events = await eventsSince(t, mark);
    expect(events.map((e) => e.type)).toEqual(['member.updated']);
    expect(events[0]!.data).toMatchObject({ nickname: 'cruddy', changed: ['nickname'], previous: { nickname: null } });

    // A field receivers are not given changes nothing they see: no event.
    mark = await eventMark(t);
    expect((await t.request({ method: 'PUT', url: `/api/v1/User/${userId}?usr_bio=again`, headers: staff.headers })).statusCode).toBe(200);
    expect(await typesSince(t, mark)).toEqual([]);

    // A write the database refuses (an address another member holds) rolls back, event and all.
    const clash = await t.request({ method: 'PUT', url: `/api/v1/User/${userId}?usr_email=${encodeURIComponent(other.email)}`, headers: staff.headers });
    expect(clash.statusCode).toBeGreaterThanOrEqual(400);
    expect(await typesSince(t, mark)).toEqual([]);

    const del = await t.request({ method: 'DELETE', url: `/api/v1/User/${userId}`, headers: staff.headers });
    expect(del.statusCode, del.body).toBe(200);
    events = await eventsSince(t, mark);
    expect(events.map((e) => e.type)).toEqual(['member.deleted']);
    expect(events[0]).toMatchObject({ userId, data: { user_id: userId, email: 'crud-user@example.com', nickname: 'cruddy' } });
  });
});

describe('manual tier assignment on /admin/tiers', () => {
  let staff: WebClient;
  let bronze: TestTier;
  let silver: TestTier;
  beforeAll(async () => {
    const s = await t.createUser({ permission: 10 });
    staff = await signIn(t, s.email, s.password);
    bronze = await createTier(t, { name: 'bronze', level: 10 });
    silver = await createTier(t, { name: 'silver', level: 20 });
  });
  const token = async () => formToken((await t.services.webSessions.load(staff.jar.cookies.get('gatehouse_session')))!, 'tier-members');

  it('adding writes tier.granted (how manual), moving names the previous tier, removing writes tier.removed (revoked)', async () => {
    const u = await t.createUser();
    let mark = await eventMark(t);
    const add = await staff.postForm(`/admin/tiers/${bronze.tierId}/members`, { form_token: await token(), user_id: String(u.userId) });
    expect(add.statusCode).toBe(303);
    let events = await eventsSince(t, mark);
    expect(events.map((e) => e.type)).toEqual(['tier.granted']);
    expect(events[0]).toMatchObject({ userId: u.userId });
    expect(events[0]!.data).toEqual({
      user_id: u.userId,
      email: u.email,
      tier: { id: bronze.tierId, name: 'bronze', level: 10 },
      previous_tier: null,
      how: 'manual',
      source: null,
      product_id: null,
      order_item_id: null,
    });

    mark = await eventMark(t);
    await staff.postForm(`/admin/tiers/${silver.tierId}/members`, { form_token: await token(), user_id: String(u.userId) });
    events = await eventsSince(t, mark);
    expect(events.map((e) => e.type)).toEqual(['tier.granted']);
    expect(events[0]!.data).toMatchObject({ tier: { name: 'silver' }, previous_tier: { id: bronze.tierId, name: 'bronze', level: 10 }, how: 'manual' });

    // The same tier again is no change.
    mark = await eventMark(t);
    await staff.postForm(`/admin/tiers/${silver.tierId}/members`, { form_token: await token(), user_id: String(u.userId) });
    expect(await typesSince(t, mark)).toEqual([]);

    const remove = await staff.postForm(`/admin/tiers/${silver.tierId}/members/${u.userId}/remove`, { form_token: await token() });
    expect(remove.statusCode).toBe(303);
    events = await eventsSince(t, mark);
    expect(events.map((e) => e.type)).toEqual(['tier.removed']);
    expect(events[0]!.data).toEqual({
      user_id: u.userId,
      email: u.email,
      tier: { id: silver.tierId, name: 'silver', level: 20 },
      how: 'manual',
      reason: 'revoked',
      cause: 'manual',
      source: null,
      order_item_id: null,
    });
  });

  it('an assignment whose transaction rolls back writes no event', async () => {
    const u = await t.createUser();
    const mark = await eventMark(t);
    await expect(
      t.services.db.transaction().execute(async (trx) => {
        await t.services.tiers.membership.within(trx).assignManually(u.userId, bronze.tierId, null);
        throw new Error('rolled back after the change');
      }),
    ).rejects.toThrow('rolled back after the change');
    expect(await typesSince(t, mark)).toEqual([]);
  });
});

describe('posts', () => {
  let staff: { headers: Record<string, string>; userId: number };
  beforeAll(async () => {
    staff = await t.staffHeaders();
  });
  const createPost = async (fields: string) => {
    const res = await t.request({ method: 'POST', url: '/api/v1/Post', headers: { ...staff.headers, ...FORM }, payload: fields });
    expect(res.statusCode, res.body).toBe(200);
    return { id: res.json.data.pst_post_id as number, headers: staff.headers, author: staff.userId };
  };
  const runTask = () => t.services.scheduler.runNow('post_publication_events');

  it('a post created published writes post.published at once; a draft writes nothing until it is published', async () => {
    let mark = await eventMark(t);
    const p = await createPost('pst_title=Hello&pst_link=hello&pst_is_published=true&pst_tier_min_level=10');
    const events = await eventsSince(t, mark);
    expect(events.map((e) => e.type)).toEqual(['post.published']);
    expect(events[0]).toMatchObject({ userId: null });
    expect(events[0]!.data).toEqual({ post_id: p.id, title: 'Hello', link: 'hello', author_user_id: p.author, published_time: '2026-03-01 12:00:00', tier_min_level: 10 });
    // The publication marker names its event (written with the marker, not after it).
    const marker = await t.services.db.selectFrom('ppe_post_publication_events').select('ppe_obe_uid').where('ppe_pst_post_id', '=', p.id).executeTakeFirstOrThrow();
    expect(marker.ppe_obe_uid).toBe(events[0]!.id);
    expect(await t.services.db.selectFrom('obe_outbound_events').select('obe_type').where('obe_uid', '=', marker.ppe_obe_uid!).executeTakeFirstOrThrow()).toEqual({ obe_type: 'post.published' });

    mark = await eventMark(t);
    const draft = await createPost('pst_title=Draft&pst_is_published=false');
    expect(await typesSince(t, mark)).toEqual([]);
    expect((await t.request({ method: 'PUT', url: `/api/v1/Post/${draft.id}?pst_body=more`, headers: draft.headers })).statusCode).toBe(200);
    expect(await typesSince(t, mark)).toEqual([]);
    expect((await t.request({ method: 'PUT', url: `/api/v1/Post/${draft.id}?pst_is_published=true`, headers: draft.headers })).statusCode).toBe(200);
    expect(await typesSince(t, mark)).toEqual(['post.published']);
    // Edited again while published: no second event.
    expect((await t.request({ method: 'PUT', url: `/api/v1/Post/${draft.id}?pst_title=Draft%202`, headers: draft.headers })).statusCode).toBe(200);
    await runTask();
    expect(await typesSince(t, mark)).toEqual(['post.published']);
  });

  it('a post scheduled for later is published by the task when its time passes, exactly once', async () => {
    const mark = await eventMark(t);
    const p = await createPost('pst_title=Later&pst_is_published=true&pst_published_time=2026-03-02%2009%3A00%3A00');
    await runTask();
    expect(await typesSince(t, mark)).toEqual([]);
    t.clock.set('2026-03-02T09:00:00Z');
    await Promise.all([runTask(), runTask()]);
    await runTask();
    const events = await eventsSince(t, mark);
    expect(events.map((e) => e.type)).toEqual(['post.published']);
    expect(events[0]!.data).toMatchObject({ post_id: p.id, title: 'Later', published_time: '2026-03-02 09:00:00' });
    expect(events[0]!.timestamp).toBe('2026-03-02 09:00:00');
  });

  it('a post taken out of publication and published again is a new publication', async () => {
    const p = await createPost('pst_title=Again&pst_is_published=true');
    const mark = await eventMark(t);
    expect((await t.request({ method: 'PUT', url: `/api/v1/Post/${p.id}?pst_is_published=false`, headers: p.headers })).statusCode).toBe(200);
    await runTask();
    expect(await typesSince(t, mark)).toEqual([]);
    expect((await t.request({ method: 'PUT', url: `/api/v1/Post/${p.id}?pst_is_published=true`, headers: p.headers })).statusCode).toBe(200);
    expect(await typesSince(t, mark)).toEqual(['post.published']);
  });
});
