import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TierInputError } from '../../src/tiers/errors.js';
import { BILLING_SOURCES, type TierMembershipService } from '../../src/tiers/membership.js';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { onPostgres } from '../helpers/database.js';
import { changeRows, createPlainGroupWithMember, createTier, tierMemberships, type TestTier } from '../helpers/tiers.js';

let t: TestApp;
let m: TierMembershipService;
let basic: TestTier;
let silver: TestTier;
let gold: TestTier;
let goldTwin: TestTier;
beforeAll(async () => {
  t = await createTestApp();
  m = t.services.tiers.membership;
  basic = await createTier(t, { name: 'basic', level: 10 });
  silver = await createTier(t, { name: 'silver', level: 20 });
  gold = await createTier(t, { name: 'gold', level: 30 });
  goldTwin = await createTier(t, { name: 'platinum', level: 30 });
});
afterAll(async () => t.close());

const product = (tier: TestTier | null, productId = 900) => ({ productId, tierId: tier?.tierId ?? null });
const ref = (id: number) => ({ type: 'order_item', id });

async function newUser(): Promise<number> {
  return (await t.createUser()).userId;
}

async function tierOf(userId: number): Promise<number | null> {
  const rows = await tierMemberships(t, userId);
  expect(rows.length).toBeLessThanOrEqual(1);
  return rows[0]?.grm_sbt_subscription_tier_id ?? null;
}

describe('tier membership state table', () => {
  it('no tier + purchase of a product linked to a tier: member of the product tier, change recorded', async () => {
    const userId = await newUser();
    const out = await m.grantTierFromPurchase(userId, product(silver, 41), 'card_processor', ref(7001));
    expect(out).toEqual({ outcome: 'joined', tierId: silver.tierId });
    const rows = await tierMemberships(t, userId);
    expect(rows).toHaveLength(1);
    expect(rows[0]).toMatchObject({
      grm_grp_group_id: silver.groupId,
      grm_foreign_key_id: userId,
      grm_sbt_subscription_tier_id: silver.tierId,
      grm_assignment_method: 'purchase',
      grm_subscription_status: 'active',
    });
    expect(rows[0]!.grm_assigned_time).toEqual(t.clock.now());
    const changes = await changeRows(t, userId);
    expect(changes).toHaveLength(1);
    expect(changes[0]).toMatchObject({
      cht_entity_type: 'subscription_tier',
      cht_entity_id: silver.tierId,
      cht_usr_user_id: userId,
      cht_field_name: 'tier_membership',
      cht_old_value: null,
      cht_new_value: String(silver.tierId),
      cht_change_reason: 'purchase',
      cht_reference_type: 'order_item',
      cht_reference_id: 7001,
      cht_changed_by_usr_user_id: null,
    });
    expect(changes[0]!.cht_change_time).toEqual(t.clock.now());
    expect(JSON.parse(changes[0]!.cht_metadata!)).toEqual({
      source: 'card_processor',
      event: 'purchase',
      product_id: 41,
      old_tier: null,
      new_tier: 'silver',
      old_level: null,
      new_level: 20,
    });
  });

  it("member of A + purchase of B with a higher level: removed from A first, member of B", async () => {
    const userId = await newUser();
    await m.grantTierFromPurchase(userId, product(basic), 'wallet_provider', ref(1));
    const out = await m.grantTierFromPurchase(userId, product(gold), 'wallet_provider', ref(2));
    expect(out).toEqual({ outcome: 'moved', fromTierId: basic.tierId, tierId: gold.tierId });
    expect(await tierOf(userId)).toBe(gold.tierId);
    const changes = await changeRows(t, userId);
    expect(changes.map((c) => [c.cht_change_reason, c.cht_old_value, c.cht_new_value, c.cht_reference_id])).toEqual([
      ['purchase', null, String(basic.tierId), 1],
      ['purchase', String(basic.tierId), String(gold.tierId), 2],
    ]);
  });

  it("member of A + purchase of B with an equal level: moved to B (equal counts as an upgrade)", async () => {
    const userId = await newUser();
    await m.grantTierFromPurchase(userId, product(gold), 'ios_store', ref(1));
    const out = await m.grantTierFromPurchase(userId, product(goldTwin), 'ios_store', ref(2));
    expect(out).toEqual({ outcome: 'moved', fromTierId: gold.tierId, tierId: goldTwin.tierId });
    expect(await tierOf(userId)).toBe(goldTwin.tierId);
    const last = (await changeRows(t, userId)).at(-1)!;
    expect([last.cht_change_reason, last.cht_old_value, last.cht_new_value]).toEqual(['purchase', String(gold.tierId), String(goldTwin.tierId)]);
  });

  it('member of A + renewal of a product linked to a higher tier B: member of B', async () => {
    const userId = await newUser();
    await m.grantTierFromPurchase(userId, product(basic), 'android_store', ref(1));
    const out = await m.grantTierFromPurchase(userId, product(silver), 'android_store', ref(2), { event: 'renewal' });
    expect(out).toEqual({ outcome: 'moved', fromTierId: basic.tierId, tierId: silver.tierId });
    expect((await changeRows(t, userId)).at(-1)!.cht_change_reason).toBe('renewal');
  });

  it('member of A + purchase of B with a lower level: A unchanged, the assignment skipped and still recorded', async () => {
    const userId = await newUser();
    await m.grantTierFromPurchase(userId, product(gold), 'card_processor', ref(1));
    const [before] = await tierMemberships(t, userId);
    t.clock.advanceSeconds(30);
    const out = await m.grantTierFromPurchase(userId, product(basic, 77), 'card_processor', ref(2));
    expect(out).toEqual({ outcome: 'skipped_lower_level', keptTierId: gold.tierId, tierId: basic.tierId });
    expect(await tierMemberships(t, userId)).toEqual([before]);
    const changes = await changeRows(t, userId);
    expect(changes).toHaveLength(2);
    expect(changes[1]).toMatchObject({
      cht_entity_id: basic.tierId,
      cht_old_value: String(gold.tierId),
      cht_new_value: String(gold.tierId),
      cht_change_reason: 'purchase_skipped_lower_level',
      cht_reference_type: 'order_item',
      cht_reference_id: 2,
    });
    expect(changes[1]!.cht_change_time).toEqual(t.clock.now());
    expect(JSON.parse(changes[1]!.cht_metadata!)).toEqual({
      source: 'card_processor',
      event: 'purchase',
      product_id: 77,
      old_tier: 'gold',
      new_tier: 'gold',
      requested_tier: 'basic',
      old_level: 30,
      requested_level: 10,
    });
  });

  it('a renewal of a lower tier never lowers the level either, and is recorded as a renewal skip', async () => {
    const userId = await newUser();
    await m.grantTierFromPurchase(userId, product(gold), 'card_processor', ref(1));
    const out = await m.grantTierFromPurchase(userId, product(silver), 'card_processor', ref(2), { event: 'renewal' });
    expect(out.outcome).toBe('skipped_lower_level');
    expect(await tierOf(userId)).toBe(gold.tierId);
    expect((await changeRows(t, userId)).at(-1)!.cht_change_reason).toBe('renewal_skipped_lower_level');
  });

  it('a renewal of the current tier keeps the membership and records the renewal', async () => {
    const userId = await newUser();
    await m.grantTierFromPurchase(userId, product(silver), 'card_processor', ref(1));
    const [before] = await tierMemberships(t, userId);
    await m.setSubscriptionStatus(userId, 'cancelled');
    t.clock.advanceSeconds(3600);
    const out = await m.grantTierFromPurchase(userId, product(silver), 'card_processor', ref(2), { event: 'renewal' });
    expect(out).toEqual({ outcome: 'renewed', tierId: silver.tierId });
    const [after] = await tierMemberships(t, userId);
    expect(after).toEqual({ ...before, grm_subscription_status: 'active' });
    const last = (await changeRows(t, userId)).at(-1)!;
    expect([last.cht_change_reason, last.cht_old_value, last.cht_new_value]).toEqual(['renewal', String(silver.tierId), String(silver.tierId)]);
  });

  it('a product without a tier link changes nothing and records nothing', async () => {
    const userId = await newUser();
    expect(await m.grantTierFromPurchase(userId, product(null), 'card_processor', ref(1))).toEqual({ outcome: 'no_tier_link' });
    expect(await tierOf(userId)).toBeNull();
    expect(await changeRows(t, userId)).toEqual([]);
  });

  it('a grant into an inactive tier is skipped and recorded; a membership in an inactive tier counts as no tier', async () => {
    const dormant = await createTier(t, { name: 'dormant', level: 99, active: false });
    const userId = await newUser();
    const out = await m.grantTierFromPurchase(userId, product(dormant), 'card_processor', ref(1));
    expect(out).toEqual({ outcome: 'skipped_tier_unavailable', tierId: dormant.tierId });
    expect(await tierOf(userId)).toBeNull();
    expect((await changeRows(t, userId)).map((c) => c.cht_change_reason)).toEqual(['purchase_skipped_tier_unavailable']);
  });

  it('a member of a tier since deactivated counts as tierless: a lower-level purchase moves them instead of being skipped', async () => {
    const retiring = await createTier(t, { name: 'retiring', level: 50 });
    const userId = await newUser();
    await m.grantTierFromPurchase(userId, product(retiring), 'card_processor', ref(1));
    await t.services.db.updateTable('sbt_subscription_tiers').set({ sbt_is_active: false }).where('sbt_subscription_tier_id', '=', retiring.tierId).execute();
    const out = await m.grantTierFromPurchase(userId, product(basic), 'card_processor', ref(2));
    expect(out).toEqual({ outcome: 'moved', fromTierId: retiring.tierId, tierId: basic.tierId });
    expect(await tierOf(userId)).toBe(basic.tierId);
    const last = (await changeRows(t, userId)).at(-1)!;
    expect([last.cht_change_reason, last.cht_old_value, last.cht_new_value]).toEqual(['purchase', String(retiring.tierId), String(basic.tierId)]);
  });

  for (const reason of ['expiry', 'cancellation', 'refund'] as const) {
    it(`member of any tier + subscription ${reason}: no tier, removed from all tiers, change recorded`, async () => {
      const userId = await newUser();
      await m.grantTierFromPurchase(userId, product(silver), 'android_store', ref(1));
      const out = await m.removeFromAllTiers(userId, reason, { type: 'webhook_log', id: 55 });
      expect(out).toEqual({ removedTierIds: [silver.tierId] });
      expect(await tierOf(userId)).toBeNull();
      const last = (await changeRows(t, userId)).at(-1)!;
      expect(last).toMatchObject({
        cht_entity_id: silver.tierId,
        cht_old_value: String(silver.tierId),
        cht_new_value: null,
        cht_change_reason: reason,
        cht_reference_type: 'webhook_log',
        cht_reference_id: 55,
      });
    });
  }

  it('removing a user from tiers touches tier groups only, never other groups', async () => {
    const userId = await newUser();
    const club = await createPlainGroupWithMember(t, userId);
    await m.grantTierFromPurchase(userId, product(gold), 'card_processor', ref(1));
    await m.removeFromAllTiers(userId, 'expiry', null);
    const rows = await t.services.db.selectFrom('grm_group_members').selectAll().where('grm_foreign_key_id', '=', userId).execute();
    expect(rows.map((r) => [r.grm_group_member_id, r.grm_grp_group_id, r.grm_sbt_subscription_tier_id])).toEqual([[club.memberId, club.groupId, null]]);
  });

  it('moving between tiers keeps the user in non-tier groups', async () => {
    const userId = await newUser();
    const club = await createPlainGroupWithMember(t, userId);
    await m.grantTierFromPurchase(userId, product(basic), 'card_processor', ref(1));
    await m.grantTierFromPurchase(userId, product(gold), 'card_processor', ref(2));
    await m.assignManually(userId, null, null);
    const rows = await t.services.db.selectFrom('grm_group_members').select('grm_group_member_id').where('grm_foreign_key_id', '=', userId).execute();
    expect(rows.map((r) => r.grm_group_member_id)).toEqual([club.memberId]);
  });

  it('removal of a tierless user changes nothing and records nothing', async () => {
    const userId = await newUser();
    expect(await m.removeFromAllTiers(userId, 'refund', null)).toEqual({ removedTierIds: [] });
    expect(await changeRows(t, userId)).toEqual([]);
  });

  it('an administrator adds a user to a tier of any level, or removes them: recorded as a manual assignment', async () => {
    const { userId: adminId } = await t.createUser({ permission: 5 });
    const userId = await newUser();
    await m.grantTierFromPurchase(userId, product(gold), 'card_processor', ref(1));
    expect(await m.assignManually(userId, basic.tierId, adminId)).toEqual({ tierId: basic.tierId, previousTierId: gold.tierId });
    const [row] = await tierMemberships(t, userId);
    expect(row).toMatchObject({ grm_sbt_subscription_tier_id: basic.tierId, grm_assignment_method: 'manual', grm_subscription_status: 'active' });
    expect(await m.assignManually(userId, null, adminId)).toEqual({ tierId: null, previousTierId: basic.tierId });
    expect(await tierOf(userId)).toBeNull();
    const changes = (await changeRows(t, userId)).slice(1);
    expect(changes.map((c) => [c.cht_entity_id, c.cht_old_value, c.cht_new_value, c.cht_change_reason, c.cht_changed_by_usr_user_id, c.cht_reference_type])).toEqual([
      [basic.tierId, String(gold.tierId), String(basic.tierId), 'manual', adminId, null],
      [basic.tierId, String(basic.tierId), null, 'manual', adminId, null],
    ]);
  });

  it('a manual assignment to the current tier marks it manual and is still recorded', async () => {
    const userId = await newUser();
    await m.grantTierFromPurchase(userId, product(silver), 'card_processor', ref(1));
    await m.assignManually(userId, silver.tierId, null);
    const [row] = await tierMemberships(t, userId);
    expect(row!.grm_assignment_method).toBe('manual');
    expect((await changeRows(t, userId)).map((c) => c.cht_change_reason)).toEqual(['purchase', 'manual']);
  });

  it('refuses manual assignment to an unknown or inactive tier, and any change for an unknown user', async () => {
    const userId = await newUser();
    const dormant = await createTier(t, { name: 'sleepy', level: 1, active: false });
    await expect(m.assignManually(userId, 999_999, null)).rejects.toThrow(new TierInputError('No tier with id 999999', { tier: 'not found' }));
    await expect(m.assignManually(userId, dormant.tierId, null)).rejects.toThrow('Tier sleepy is not active');
    await expect(m.grantTierFromPurchase(999_999, product(gold), 'card_processor', null)).rejects.toThrow('No user with id 999999');
    expect(await changeRows(t, userId)).toEqual([]);
  });

  it("runs inside the caller's transaction when bound to it: a failure after the grant undoes the grant and its change row", async () => {
    const userId = await newUser();
    await expect(
      t.services.db.transaction().execute(async (trx) => {
        await m.within(trx).grantTierFromPurchase(userId, product(gold), 'card_processor', ref(1));
        expect((await m.within(trx).grantTierFromPurchase(userId, product(basic), 'card_processor', ref(2))).outcome).toBe('skipped_lower_level');
        throw new Error('order item write failed');
      }),
    ).rejects.toThrow('order item write failed');
    expect(await tierOf(userId)).toBeNull();
    expect(await changeRows(t, userId)).toEqual([]);
  });

  it("reads the product's tier link (pro_sbt_subscription_tier_id) when given a product id", async () => {
    const insert = async (tierId: number | null) =>
      (
        await sql<{ pro_product_id: number }>`
          insert into pro_products (pro_name, pro_link, pro_sbt_subscription_tier_id)
          values (${'Membership'}, ${'membership'}, ${tierId}) returning pro_product_id`.execute(t.services.db)
      ).rows[0]!.pro_product_id;
    const linked = await insert(silver.tierId);
    const unlinked = await insert(null);
    const userId = await newUser();
    expect(await m.grantTierFromPurchase(userId, unlinked, 'card_processor', ref(1))).toEqual({ outcome: 'no_tier_link' });
    expect(await m.grantTierFromPurchase(userId, linked, 'card_processor', ref(2))).toEqual({ outcome: 'joined', tierId: silver.tierId });
    expect(JSON.parse((await changeRows(t, userId))[0]!.cht_metadata!).product_id).toBe(Number(linked));
    await expect(m.grantTierFromPurchase(userId, 987_654, 'card_processor', null)).rejects.toThrow('No product with id 987654');
    // The link must name a tier that exists.
    await expect(insert(987_654)).rejects.toThrow(/pro_products_tier_fk/);
  });

  it('accepts all four billing sources on the one grant path, and refuses any other', async () => {
    for (const source of BILLING_SOURCES) {
      const userId = await newUser();
      expect((await m.grantTierFromPurchase(userId, product(basic), source, null)).outcome).toBe('joined');
      expect(JSON.parse((await changeRows(t, userId))[0]!.cht_metadata!).source).toBe(source);
    }
    await expect(m.grantTierFromPurchase(await newUser(), product(basic), 'cash' as never, null)).rejects.toThrow("Unknown billing source 'cash'");
  });
});

describe('one tier per user, enforced by the database', () => {
  it('refuses a second tier membership row for the same user', async () => {
    const userId = await newUser();
    await m.grantTierFromPurchase(userId, product(basic), 'card_processor', null);
    await expect(
      t.services.db
        .insertInto('grm_group_members')
        .values({ grm_grp_group_id: gold.groupId, grm_foreign_key_id: userId, grm_sbt_subscription_tier_id: gold.tierId, grm_subscription_status: 'active' })
        .execute(),
    ).rejects.toThrow(/grm_group_members_one_tier/);
  });

  it("refuses a tier membership whose tier does not own the group", async () => {
    const userId = await newUser();
    await expect(
      t.services.db
        .insertInto('grm_group_members')
        .values({ grm_grp_group_id: basic.groupId, grm_foreign_key_id: userId, grm_sbt_subscription_tier_id: gold.tierId, grm_subscription_status: 'active' })
        .execute(),
    ).rejects.toThrow(/foreign key/);
  });

  it(`30 concurrent grants for one user leave exactly one membership, at the highest level${onPostgres ? '' : ' (serialised by the embedded database)'}`, async () => {
    const userId = await newUser();
    const tiers: TestTier[] = [];
    for (let i = 0; i < 30; i++) tiers.push(await createTier(t, { name: `c${i}`, level: 100 + ((i * 7) % 30) }));
    const results = await Promise.allSettled(tiers.map((tier, i) => m.grantTierFromPurchase(userId, { productId: 1000 + i, tierId: tier.tierId }, 'card_processor', ref(i))));
    expect(results.filter((r) => r.status === 'rejected')).toEqual([]);
    const rows = await tierMemberships(t, userId);
    expect(rows).toHaveLength(1);
    const top = tiers.reduce((a, b) => (b.level > a.level ? b : a));
    expect(rows[0]!.grm_sbt_subscription_tier_id).toBe(top.tierId);
    // Every grant wrote exactly one row: a join, a move or a skip.
    const changes = await changeRows(t, userId);
    expect(changes).toHaveLength(30);
    expect(changes.filter((c) => c.cht_change_reason === 'purchase').length + changes.filter((c) => c.cht_change_reason === 'purchase_skipped_lower_level').length).toBe(30);
    // Replaying the rows in order reproduces the final state: the grants really were serialised.
    let current: string | null = null;
    for (const c of changes) {
      expect(c.cht_old_value).toBe(current);
      current = c.cht_new_value;
    }
    expect(current).toBe(String(top.tierId));
  });
});
