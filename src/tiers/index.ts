import type { Kysely } from 'kysely';
import type { DB } from '../db/types.js';
import type { Clock } from '../lib/clock.js';
import { tierFeatureAudit, tierFeatureAuditReport } from './audit.js';
import { FeatureRegistry, type FeatureRegistryOptions } from './feature-registry.js';
import { TierFeatureReader, fetchUserTier, type TierSummary, type UserTier, type UserTierCache } from './features.js';
import { TierMembershipService } from './membership.js';

/**
 * The tier system of one process: the feature registry (loaded and validated at start), the membership
 * services (the one grant path, the one removal path, manual assignment) and feature reads.
 */
export class TierSystem {
  readonly membership: TierMembershipService;
  private readonly readers = new WeakMap<object, TierFeatureReader>();

  constructor(
    readonly db: Kysely<DB>,
    readonly clock: Clock,
    readonly registry: FeatureRegistry,
    /** Users' tiers kept in memory by the server (none in the CLI). */
    readonly userTiers?: UserTierCache,
  ) {
    this.membership = new TierMembershipService(db, clock);
  }

  /** Loads the feature definitions; throws FeatureDefinitionError (naming file and key) when one is invalid. */
  static load(db: Kysely<DB>, clock: Clock, opts: FeatureRegistryOptions = {}, userTiers?: UserTierCache): TierSystem {
    return new TierSystem(db, clock, FeatureRegistry.load(opts), userTiers);
  }

  /** The feature reader for a scope (a request): one tier query per user per scope, shared by every read. */
  readerFor(scope: object): TierFeatureReader {
    let reader = this.readers.get(scope);
    if (!reader) {
      reader = new TierFeatureReader(this.db, this.registry, this.userTiers);
      this.readers.set(scope, reader);
    }
    return reader;
  }

  /** The session user summary's tier: name, level and every declared feature resolved; null when tierless. */
  async sessionTier(db: Kysely<DB>, userId: number, known?: UserTier | null): Promise<TierSummary | null> {
    const tier = known !== undefined ? known : await fetchUserTier(db, userId, this.userTiers);
    if (!tier) return null;
    return { name: tier.name, tier_level: tier.level, features: this.registry.resolveAll(tier.features) };
  }

  audit() {
    return tierFeatureAudit(this.db, this.registry);
  }

  /** The feature coverage report for the management surface. */
  auditReport() {
    return tierFeatureAuditReport(this.db, this.registry);
  }
}

export { FeatureRegistry, FeatureDefinitionError } from './feature-registry.js';
export { TierFeatureReader, driveFeatures, DRIVE_FAIL_CLOSED, type TierSummary } from './features.js';
export { TierInputError, TIER_EXISTS } from './errors.js';
export type { BillingSource, GrantOutcome, RemovalReason, TierProduct } from './membership.js';
