import type { FeatureValue } from '../../src/db/types.js';
import { createTier as createTierService } from '../../src/tiers/tiers.js';
import type { TestApp } from './app.js';

export interface TestTier {
  tierId: number;
  groupId: number;
  name: string;
  level: number;
}

let seq = 0;

/** Creates a tier (and its group) through SubscriptionTier.CreateNew's service. */
export async function createTier(
  t: TestApp,
  o: { name?: string; level: number; features?: Record<string, FeatureValue>; displayName?: string; active?: boolean },
): Promise<TestTier> {
  const name = o.name ?? `tier${++seq}`;
  const tierId = await createTierService(
    { db: t.services.db, clock: t.clock, registry: t.services.tiers.registry, createdBy: null },
    {
      sbt_name: name,
      sbt_display_name: o.displayName ?? name.toUpperCase(),
      sbt_tier_level: o.level,
      sbt_features: o.features ?? {},
      sbt_is_active: o.active ?? true,
    },
  );
  const row = await t.services.db
    .selectFrom('sbt_subscription_tiers')
    .select('sbt_grp_group_id')
    .where('sbt_subscription_tier_id', '=', tierId)
    .executeTakeFirstOrThrow();
  return { tierId, groupId: row.sbt_grp_group_id, name, level: o.level };
}

/** A plain (non-tier) group with the user as a member. */
export async function createPlainGroupWithMember(t: TestApp, userId: number, name = `club${++seq}`): Promise<{ groupId: number; memberId: number }> {
  const g = await t.services.db
    .insertInto('grp_groups')
    .values({ grp_name: name, grp_category: 'club' })
    .returning('grp_group_id')
    .executeTakeFirstOrThrow();
  const m = await t.services.db
    .insertInto('grm_group_members')
    .values({ grm_grp_group_id: g.grp_group_id, grm_foreign_key_id: userId })
    .returning('grm_group_member_id')
    .executeTakeFirstOrThrow();
  return { groupId: g.grp_group_id, memberId: m.grm_group_member_id };
}

/** The user's tier memberships, as stored. */
export function tierMemberships(t: TestApp, userId: number) {
  return t.services.db
    .selectFrom('grm_group_members')
    .selectAll()
    .where('grm_foreign_key_id', '=', userId)
    .where('grm_sbt_subscription_tier_id', 'is not', null)
    .execute();
}

/** The user's change-tracking rows, oldest first. */
export function changeRows(t: TestApp, userId: number) {
  return t.services.db
    .selectFrom('cht_change_tracking')
    .selectAll()
    .where('cht_usr_user_id', '=', userId)
    .orderBy('cht_change_tracking_id')
    .execute();
}
