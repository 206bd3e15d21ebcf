import type { Kysely } from 'kysely';
import type { DB } from '../db/types.js';
import type { Clock } from '../lib/clock.js';
import { tierFeatureAudit, type TierCoverage } from './audit.js';
import { TierInputError } from './errors.js';
import { FeatureRegistry } from './feature-registry.js';
import { TierMembershipService } from './membership.js';
import { findTierByName, listTiers } from './tiers.js';

// The operator CLI's tier commands (DESIGN §3). Each returns the JSON object the command prints; bad
// input throws TierInputError (the CLI exits 2 with its message).

export interface TierListEntry {
  subscription_tier_id: number;
  name: string;
  display_name: string;
  tier_level: number;
  is_active: boolean;
  group_id: number;
  member_count: number;
  features: Record<string, unknown>;
}

/** `gatehouse tier list`: every live tier, by level then name, with its member count. */
export async function tierList(db: Kysely<DB>): Promise<{ tiers: TierListEntry[] }> {
  const tiers = await listTiers(db);
  const counts = await db
    .selectFrom('grm_group_members')
    .select(['grm_sbt_subscription_tier_id', (eb) => eb.fn.countAll<number>().as('n')])
    .where('grm_sbt_subscription_tier_id', 'is not', null)
    .groupBy('grm_sbt_subscription_tier_id')
    .execute();
  const byTier = new Map(counts.map((c) => [Number(c.grm_sbt_subscription_tier_id), Number(c.n)]));
  return {
    tiers: tiers.map((t) => ({
      subscription_tier_id: t.sbt_subscription_tier_id,
      name: t.sbt_name,
      display_name: t.sbt_display_name,
      tier_level: t.sbt_tier_level,
      is_active: t.sbt_is_active,
      group_id: t.sbt_grp_group_id,
      member_count: byTier.get(t.sbt_subscription_tier_id) ?? 0,
      features: t.sbt_features ?? {},
    })),
  };
}

/** `gatehouse tier assign --user-id N --tier NAME|none`: a manual assignment by the operator. */
export async function tierAssign(db: Kysely<DB>, clock: Clock, userId: number, tierName: string): Promise<{ user_id: number; tier: string | null }> {
  if (!Number.isSafeInteger(userId) || userId <= 0) throw new TierInputError('--user-id must be a positive integer', { user_id: 'must be a positive integer' });
  let tierId: number | null = null;
  let name: string | null = null;
  if (tierName !== 'none') {
    const tier = await findTierByName(db, tierName);
    if (!tier) throw new TierInputError(`No tier named '${tierName}'`, { tier: 'not found' });
    tierId = tier.sbt_subscription_tier_id;
    name = tier.sbt_name;
  }
  await new TierMembershipService(db, clock).assignManually(userId, tierId, null);
  return { user_id: userId, tier: name };
}

/** `gatehouse tier audit`: per active tier, the declared feature keys it has no explicit value for. */
export async function tierAudit(db: Kysely<DB>, registry: FeatureRegistry = FeatureRegistry.load()): Promise<{ tiers: TierCoverage[] }> {
  return tierFeatureAudit(db, registry);
}
