import type { Kysely } from 'kysely';
import type { DB } from '../db/types.js';
import type { FeatureRegistry } from './feature-registry.js';
import { listTiers } from './tiers.js';

export interface TierCoverage {
  name: string;
  /** Declared feature keys the tier has no explicit value for (it gets the fallback), sorted. */
  missing: string[];
}

/**
 * Feature coverage: declared defaults are only fallbacks, so every active tier should carry an explicit
 * value for every declared feature. Lists, per active tier (by level, then name), the keys it lacks.
 */
export async function tierFeatureAudit(db: Kysely<DB>, registry: FeatureRegistry): Promise<{ tiers: TierCoverage[] }> {
  const declared = registry.keys().sort();
  const tiers = await listTiers(db, { activeOnly: true });
  return {
    tiers: tiers.map((t) => {
      const features = t.sbt_features ?? {};
      return { name: t.sbt_name, missing: declared.filter((k) => !Object.prototype.hasOwnProperty.call(features, k)) };
    }),
  };
}

/** The audit as the management surface reports it: each tier with its level, and the declared keys. */
export async function tierFeatureAuditReport(
  db: Kysely<DB>,
  registry: FeatureRegistry,
): Promise<{ declared_features: string[]; tiers: Array<TierCoverage & { tier_level: number }> }> {
  const declared = registry.keys().sort();
  const tiers = await listTiers(db, { activeOnly: true });
  return {
    declared_features: declared,
    tiers: tiers.map((t) => {
      const features = t.sbt_features ?? {};
      return { name: t.sbt_name, tier_level: t.sbt_tier_level, missing: declared.filter((k) => !Object.prototype.hasOwnProperty.call(features, k)) };
    }),
  };
}
