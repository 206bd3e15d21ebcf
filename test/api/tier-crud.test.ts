import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { changeRows, createPlainGroupWithMember, createTier, tierMemberships } from '../helpers/tiers.js';

// SubscriptionTier over CRUD: public read, staff write through CreateNew and the update hook; Group and
// GroupMember: staff only, tier groups written by the tier services alone.
let t: TestApp;
let staff: Record<string, string>;
let member: Record<string, string>;
beforeAll(async () => {
  t = await createTestApp();
  staff = (await t.staffHeaders()).headers;
  member = (await t.keyHeaders()).headers;
});
afterAll(async () => t.close());

const form = (fields: Record<string, string>) => ({
  payload: new URLSearchParams(fields).toString(),
  headers: { 'content-type': 'application/x-www-form-urlencoded' },
});

async function post(className: string, fields: Record<string, string>, headers = staff) {
  const f = form(fields);
  return t.request({ method: 'POST', url: `/api/v1/${className}`, payload: f.payload, headers: { ...headers, ...f.headers } });
}

async function put(className: string, id: number, fields: Record<string, string>, headers = staff) {
  return t.request({ method: 'PUT', url: `/api/v1/${className}/${id}?${new URLSearchParams(fields).toString()}`, headers });
}

async function groupOf(tierId: number) {
  const row = await t.services.db
    .selectFrom('sbt_subscription_tiers')
    .innerJoin('grp_groups', 'grp_group_id', 'sbt_grp_group_id')
    .select(['grp_group_id', 'grp_name', 'grp_category', 'grp_usr_user_id_created'])
    .where('sbt_subscription_tier_id', '=', tierId)
    .executeTakeFirstOrThrow();
  return row;
}

describe('SubscriptionTier over CRUD', () => {
  it("POST /SubscriptionTier creates the tier and its group with category 'subscription_tier'", async () => {
    const res = await post('SubscriptionTier', {
      sbt_name: 'crud_gold',
      sbt_display_name: 'Gold',
      sbt_tier_level: '30',
      sbt_features: JSON.stringify({ drive_share_links: true, mailbox_fleet_max_domains: 3 }),
    });
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json.success_message).toBe('New SubscriptionTier successful.');
    expect(res.json.data).toMatchObject({
      sbt_name: 'crud_gold',
      sbt_display_name: 'Gold',
      sbt_tier_level: 30,
      sbt_is_active: true,
      sbt_features: { drive_share_links: true, mailbox_fleet_max_domains: 3 },
      sbt_delete_time: null,
    });
    const group = await groupOf(res.json.data.sbt_subscription_tier_id);
    expect(res.json.data.sbt_grp_group_id).toBe(group.grp_group_id);
    expect(group).toMatchObject({ grp_name: 'crud_gold', grp_category: 'subscription_tier' });
  });

  it("refuses a duplicate name with 400 TransactionError 'Tier already exists', creating nothing", async () => {
    await post('SubscriptionTier', { sbt_name: 'crud_dup', sbt_display_name: 'Dup', sbt_tier_level: '5' });
    const before = await t.services.db.selectFrom('grp_groups').select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow();
    const res = await post('SubscriptionTier', { sbt_name: 'crud_dup', sbt_display_name: 'Dup 2', sbt_tier_level: '6' });
    expect(res.statusCode).toBe(400);
    expect(res.json).toEqual({ api_version: '1.0', errortype: 'TransactionError', error: 'Tier already exists', data: { fields: { sbt_name: 'Tier already exists' } } });
    const after = await t.services.db.selectFrom('grp_groups').select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow();
    expect(Number(after.n)).toBe(Number(before.n));
  });

  it('PUT renaming a tier renames its group', async () => {
    const created = await post('SubscriptionTier', { sbt_name: 'crud_old', sbt_display_name: 'Old', sbt_tier_level: '7' });
    const id = created.json.data.sbt_subscription_tier_id;
    const res = await put('SubscriptionTier', id, { sbt_name: 'crud_new' });
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json.data.sbt_name).toBe('crud_new');
    expect((await groupOf(id)).grp_name).toBe('crud_new');
  });

  it("PUT renaming onto another tier's name is refused 'Tier already exists' and changes nothing", async () => {
    const a = await post('SubscriptionTier', { sbt_name: 'crud_a', sbt_display_name: 'A', sbt_tier_level: '1' });
    await post('SubscriptionTier', { sbt_name: 'crud_b', sbt_display_name: 'B', sbt_tier_level: '2' });
    const res = await put('SubscriptionTier', a.json.data.sbt_subscription_tier_id, { sbt_name: 'crud_b' });
    expect(res.statusCode).toBe(400);
    expect(res.json.error).toBe('Tier already exists');
    expect((await groupOf(a.json.data.sbt_subscription_tier_id)).grp_name).toBe('crud_a');
  });

  it('refuses bad sbt_features with 400 naming each bad key, on POST and on PUT', async () => {
    const bad = JSON.stringify({ drive_storage_bytes: 'lots', drive_versioning_depth: -2, warp_drive: true });
    const created = await post('SubscriptionTier', { sbt_name: 'crud_badf', sbt_display_name: 'B', sbt_tier_level: '1', sbt_features: bad });
    expect(created.statusCode).toBe(400);
    expect(created.json).toEqual({
      api_version: '1.0',
      errortype: 'TransactionError',
      error: 'Invalid tier features: drive_storage_bytes must be an integer; drive_versioning_depth must be at least 0; warp_drive is not a declared feature',
      data: {
        fields: {
          'sbt_features.drive_storage_bytes': 'must be an integer',
          'sbt_features.drive_versioning_depth': 'must be at least 0',
          'sbt_features.warp_drive': 'is not a declared feature',
        },
      },
    });
    const ok = await post('SubscriptionTier', { sbt_name: 'crud_goodf', sbt_display_name: 'G', sbt_tier_level: '1' });
    const updated = await put('SubscriptionTier', ok.json.data.sbt_subscription_tier_id, { sbt_features: JSON.stringify({ mailbox_fleet_slot: 'yes' }) });
    expect(updated.statusCode).toBe(400);
    expect(updated.json.data).toEqual({ fields: { 'sbt_features.mailbox_fleet_slot': 'must be a boolean' } });
    const stored = await t.request({ method: 'GET', url: `/api/v1/SubscriptionTier/${ok.json.data.sbt_subscription_tier_id}`, headers: member });
    expect(stored.json.data.sbt_features).toEqual({});
  });

  it('is readable by everyone and writable by staff only', async () => {
    const tier = await createTier(t, { name: 'crud_public', level: 3 });
    const read = await t.request({ method: 'GET', url: `/api/v1/SubscriptionTier/${tier.tierId}`, headers: member });
    expect(read.statusCode).toBe(200);
    expect(read.json.data.sbt_name).toBe('crud_public');
    const write = await post('SubscriptionTier', { sbt_name: 'crud_sneaky', sbt_display_name: 'S', sbt_tier_level: '99' }, member);
    expect(write.statusCode).toBe(403);
    expect(write.json.errortype).toBe('AuthenticationError');
  });

  it('never rewrites the group link', async () => {
    const tier = await createTier(t, { name: 'crud_link', level: 3 });
    const other = await createTier(t, { name: 'crud_link2', level: 4 });
    const res = await put('SubscriptionTier', tier.tierId, { sbt_grp_group_id: String(other.groupId), sbt_display_name: 'Linked' });
    expect(res.statusCode).toBe(200);
    expect(res.json.data).toMatchObject({ sbt_grp_group_id: tier.groupId, sbt_display_name: 'Linked' });
  });
});

describe('Group and GroupMember over CRUD', () => {
  it('tier groups are not writable: no PUT or DELETE of a tier group, no POST of a subscription_tier group', async () => {
    const tier = await createTier(t, { name: 'crud_locked', level: 3 });
    const rename = await put('Group', tier.groupId, { grp_name: 'hijacked' });
    expect(rename.statusCode).toBe(403);
    expect(rename.json.errortype).toBe('AuthenticationError');
    const del = await t.request({ method: 'DELETE', url: `/api/v1/Group/${tier.groupId}`, headers: staff });
    expect(del.statusCode).toBe(403);
    const make = await post('Group', { grp_name: 'fake_tier', grp_category: 'subscription_tier' });
    expect(make.statusCode).toBe(403);
    const group = await t.services.db.selectFrom('grp_groups').selectAll().where('grp_group_id', '=', tier.groupId).executeTakeFirstOrThrow();
    expect(group).toMatchObject({ grp_name: 'crud_locked', grp_delete_time: null });
    expect(await t.services.db.selectFrom('grp_groups').select('grp_group_id').where('grp_name', '=', 'fake_tier').execute()).toEqual([]);
  });

  it('a plain group cannot be turned into a tier group', async () => {
    const made = await post('Group', { grp_name: 'book_club', grp_category: 'club' });
    expect(made.statusCode, made.body).toBe(200);
    const res = await put('Group', made.json.data.grp_group_id, { grp_category: 'subscription_tier' });
    expect(res.statusCode).toBe(403);
  });

  it('tier memberships are not writable: no POST into a tier group, no PUT of a tier membership', async () => {
    const tier = await createTier(t, { name: 'crud_members', level: 3 });
    const { userId } = await t.createUser();
    const join = await post('GroupMember', { grm_grp_group_id: String(tier.groupId), grm_foreign_key_id: String(userId) });
    expect(join.statusCode).toBe(403);
    expect(join.json).toMatchObject({ errortype: 'AuthenticationError', error: 'Tier groups change only through the tier services' });
    expect(await tierMemberships(t, userId)).toEqual([]);

    await t.services.tiers.membership.assignManually(userId, tier.tierId, null);
    const [membership] = await tierMemberships(t, userId);
    const club = await createPlainGroupWithMember(t, (await t.createUser()).userId);
    const move = await put('GroupMember', membership!.grm_group_member_id, { grm_grp_group_id: String(club.groupId) });
    expect(move.statusCode).toBe(403);
    expect(await tierMemberships(t, userId)).toEqual([membership]);
    expect((await changeRows(t, userId)).map((c) => c.cht_change_reason)).toEqual(['manual']);
  });

  it('plain groups and memberships stay writable by staff, and moving into a tier group is refused', async () => {
    const tier = await createTier(t, { name: 'crud_target', level: 3 });
    const made = await post('Group', { grp_name: 'chess', grp_category: 'club' });
    const { userId } = await t.createUser();
    const join = await post('GroupMember', { grm_grp_group_id: String(made.json.data.grp_group_id), grm_foreign_key_id: String(userId) });
    expect(join.statusCode, join.body).toBe(200);
    expect(join.json.data).toMatchObject({ grm_foreign_key_id: userId, grm_sbt_subscription_tier_id: null, grm_assignment_method: 'manual' });
    const sneak = await put('GroupMember', join.json.data.grm_group_member_id, { grm_grp_group_id: String(tier.groupId) });
    expect(sneak.statusCode).toBe(403);
    const notStaff = await post('Group', { grp_name: 'nope', grp_category: 'club' }, member);
    expect(notStaff.statusCode).toBe(403);
  });

  it('DELETE removes a plain membership for staff; a tier membership, a member caller and a second DELETE are refused', async () => {
    const made = await post('Group', { grp_name: 'knitting', grp_category: 'club' });
    const { userId } = await t.createUser();
    const join = await post('GroupMember', { grm_grp_group_id: String(made.json.data.grp_group_id), grm_foreign_key_id: String(userId) });
    const id = join.json.data.grm_group_member_id as number;
    const byMember = await t.request({ method: 'DELETE', url: `/api/v1/GroupMember/${id}`, headers: member });
    expect(byMember.statusCode).toBe(403);
    const del = await t.request({ method: 'DELETE', url: `/api/v1/GroupMember/${id}`, headers: staff });
    expect(del.statusCode, del.body).toBe(200);
    expect(del.json).toMatchObject({ success_message: 'Deletion successful.', data: { grm_group_member_id: id, grm_foreign_key_id: userId } });
    expect(await t.services.db.selectFrom('grm_group_members').select('grm_group_member_id').where('grm_group_member_id', '=', id).execute()).toEqual([]);
    const again = await t.request({ method: 'DELETE', url: `/api/v1/GroupMember/${id}`, headers: staff });
    expect(again.statusCode).toBe(400);
    expect(again.json).toMatchObject({ errortype: 'TransactionError', error: 'GroupMember not found' });

    const tier = await createTier(t, { name: 'crud_keep', level: 3 });
    await t.services.tiers.membership.assignManually(userId, tier.tierId, null);
    const [membership] = await tierMemberships(t, userId);
    const refused = await t.request({ method: 'DELETE', url: `/api/v1/GroupMember/${membership!.grm_group_member_id}`, headers: staff });
    expect(refused.statusCode).toBe(403);
    expect(await tierMemberships(t, userId)).toEqual([membership]);
  });
});
