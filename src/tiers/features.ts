import type { Kysely } from 'kysely';
import type { DB, FeatureValue } from '../db/types.js';
import type { FeatureRegistry } from './feature-registry.js';
import type { ReadCache } from '../cache/read-cache.js';
import type { ReadCaches } from '../cache/read-caches.js';

/** The tier a user's features come from: a live, active tier the user is a member of. */
/** A user's tier as the session user summary shows it: name, level and every declared feature resolved. */
export interface TierSummary {
  name: string;
  tier_level: number;
  features: Record<string, unknown>;
}

export interface UserTier {
  tierId: number;
  name: string;
  displayName: string;
  level: number;
  features: Record<string, unknown>;
}

/** Users' tiers by user id (see fetchUserTier). */
export type UserTierCache = ReadCache<number, UserTier | null>;

/** What a user's tier is read from: a write to either forgets every user's tier. */
const USER_TIER_TABLES = ['grm_group_members', 'sbt_subscription_tiers'];

export function declareUserTierCache(caches: ReadCaches): UserTierCache {
  return caches.declare('userTiers', { dependsOn: USER_TIER_TABLES, maxEntries: 10_000 });
}

/**
 * The user's tier: from `cache` while no membership or tier changed (never for a read through a
 * transaction: see ReadCache.through), else one indexed query. A membership in a deleted or inactive tier
 * grants nothing.
 */
export async function fetchUserTier(db: Kysely<DB>, userId: number, cache: UserTierCache | undefined): Promise<UserTier | null> {
  const served = cache?.through(db);
  if (!served) return readUserTier(db, userId);
  return (await served.get(userId, Date.now(), () => readUserTier(db, userId))) ?? null;
}

/** The user's tier membership (partial unique index on grm_foreign_key_id) joined to its tier by primary key. */
async function readUserTier(db: Kysely<DB>, userId: number): Promise<UserTier | null> {
  const row = await db
    .selectFrom('grm_group_members')
    .innerJoin('sbt_subscription_tiers', 'sbt_subscription_tier_id', 'grm_sbt_subscription_tier_id')
    .select(['sbt_subscription_tier_id', 'sbt_name', 'sbt_display_name', 'sbt_tier_level', 'sbt_features'])
    .where('grm_foreign_key_id', '=', userId)
    .where('grm_sbt_subscription_tier_id', 'is not', null)
    .where('sbt_delete_time', 'is', null)
    .where('sbt_is_active', '=', true)
    .executeTakeFirst();
  return userTierFromRow(row ?? null);
}

/** The tier columns of a row (fetchUserTier's, or the key lookup's left join) as a UserTier; null when absent. */
export function userTierFromRow(
  row: { sbt_subscription_tier_id: number | null; sbt_name: string | null; sbt_display_name: string | null; sbt_tier_level: number | null; sbt_features: unknown } | null,
): UserTier | null {
  if (!row || row.sbt_subscription_tier_id === null) return null;
  return {
    tierId: row.sbt_subscription_tier_id,
    name: row.sbt_name ?? '',
    displayName: row.sbt_display_name ?? '',
    level: row.sbt_tier_level ?? 0,
    features: (row.sbt_features as Record<string, unknown> | null) ?? {},
  };
}

export class UnknownFeatureError extends Error {
  constructor(key: string) {
    super(`'${key}' is not a declared tier feature`);
    this.name = 'UnknownFeatureError';
  }
}

/**
 * Feature reads for one request (or one command): the user's tier is read at most once and shared by
 * every read through this reader. Get one per request from TierSystem.readerFor(request).
 */
export class TierFeatureReader {
  private readonly tiers = new Map<number, Promise<UserTier | null>>();

  constructor(
    private readonly db: Kysely<DB>,
    private readonly registry: FeatureRegistry,
    /** Users' tiers kept in memory (see fetchUserTier); none reads each from the database. */
    private readonly userTiers?: UserTierCache,
  ) {}

  /** The user's tier as already read in this scope (authentication reads it with the key). */
  prime(userId: number, tier: UserTier | null): void {
    if (!this.tiers.has(userId)) this.tiers.set(userId, Promise.resolve(tier));
  }

  getUserTier(userId: number): Promise<UserTier | null> {
    let tier = this.tiers.get(userId);
    if (!tier) {
      tier = fetchUserTier(this.db, userId, this.userTiers);
      this.tiers.set(userId, tier);
      // A failed read is not remembered: the next read tries again.
      tier.catch(() => this.tiers.delete(userId));
    }
    return tier;
  }

  /**
   * The tier's value for the key; the declared fallback when the tier row has no entry; the caller's
   * default when the user is tierless. An undeclared key is a programming error.
   */
  async getUserFeature<T extends FeatureValue>(userId: number, key: string, callerDefault: T): Promise<T | FeatureValue> {
    const def = this.registry.get(key);
    if (!def) throw new UnknownFeatureError(key);
    const tier = await this.getUserTier(userId);
    if (!tier) return callerDefault;
    return this.registry.resolve(def, tier.features);
  }

  /** Every declared key resolved for the user, or null when tierless. */
  async allFeatures(userId: number): Promise<Record<string, FeatureValue> | null> {
    const tier = await this.getUserTier(userId);
    return tier ? this.registry.resolveAll(tier.features) : null;
  }

  /** Drops what this reader remembers about a user (after changing their tier within the same request). */
  forget(userId: number): void {
    this.tiers.delete(userId);
  }
}

/** The member Drive limits. With no tier all four fail closed: no storage, no uploads, no links, no history. */
export interface DriveFeatures {
  storageBytes: number;
  maxFileBytes: number;
  shareLinks: boolean;
  versioningDepth: number;
}

export const DRIVE_FAIL_CLOSED: DriveFeatures = { storageBytes: 0, maxFileBytes: 0, shareLinks: false, versioningDepth: 0 };

export async function driveFeatures(reader: TierFeatureReader, userId: number): Promise<DriveFeatures> {
  const [storageBytes, maxFileBytes, shareLinks, versioningDepth] = await Promise.all([
    reader.getUserFeature(userId, 'drive_storage_bytes', DRIVE_FAIL_CLOSED.storageBytes),
    reader.getUserFeature(userId, 'drive_max_file_bytes', DRIVE_FAIL_CLOSED.maxFileBytes),
    reader.getUserFeature(userId, 'drive_share_links', DRIVE_FAIL_CLOSED.shareLinks),
    reader.getUserFeature(userId, 'drive_versioning_depth', DRIVE_FAIL_CLOSED.versioningDepth),
  ]);
  return {
    storageBytes: storageBytes as number,
    maxFileBytes: maxFileBytes as number,
    shareLinks: shareLinks as boolean,
    versioningDepth: versioningDepth as number,
  };
}
