import type { Kysely, Selectable } from 'kysely';
import type { DB, FeatureValue, SubscriptionTiersTable } from '../db/types.js';
import type { Clock } from '../lib/clock.js';
import { isUniqueViolation } from '../db/errors.js';
import { TIER_EXISTS, TierInputError } from './errors.js';
import type { FeatureRegistry } from './feature-registry.js';
import { TIER_GROUP_CATEGORY, findGroups } from './groups.js';
import { inTransaction } from './transaction.js';

export type Tier = Selectable<SubscriptionTiersTable>;

const NAME_MAX = 100;

function requiredString(input: Record<string, unknown>, field: string): string {
  const v = input[field];
  if (typeof v !== 'string' || v.trim() === '') throw new TierInputError(`${field} is required`, { [field]: 'is required' });
  // Stored exactly as given (the CRUD engine writes the value it was given), so the group name matches.
  const s = v;
  if (s.length > NAME_MAX) throw new TierInputError(`${field} must be at most ${NAME_MAX} characters`, { [field]: `must be at most ${NAME_MAX} characters` });
  return s;
}

function tierLevel(v: unknown): number {
  const n = typeof v === 'string' && /^-?\d+$/.test(v.trim()) ? Number(v) : v;
  if (typeof n !== 'number' || !Number.isInteger(n) || n < -2147483648 || n > 2147483647) {
    throw new TierInputError('sbt_tier_level must be an integer', { sbt_tier_level: 'must be an integer' });
  }
  return n;
}

/**
 * Validates an sbt_features value (an object, or its JSON text as CRUD input carries it) against the
 * declared features; refuses with one field error per bad key, named 'sbt_features.{key}'.
 */
export function validateTierFeatures(registry: FeatureRegistry, raw: unknown): Record<string, FeatureValue> {
  let value = raw;
  if (typeof raw === 'string') {
    try {
      value = JSON.parse(raw);
    } catch {
      throw new TierInputError('sbt_features must be a JSON object', { sbt_features: 'is not valid JSON' });
    }
  }
  const result = registry.validateValues(value);
  if (result.ok) return result.value;
  const fields: Record<string, string> = {};
  for (const [key, message] of Object.entries(result.errors)) fields[key === 'sbt_features' ? key : `sbt_features.${key}`] = message;
  const detail = Object.entries(result.errors)
    .map(([key, message]) => `${key} ${message}`)
    .join('; ');
  throw new TierInputError(`Invalid tier features: ${detail}`, fields);
}

async function refuseExistingTierGroup(db: Kysely<DB>, name: string, exceptGroupId: number | null): Promise<void> {
  const groups = await findGroups(db, { group_name: name, category: TIER_GROUP_CATEGORY, deleted: false });
  if (groups.some((g) => g.grp_group_id !== exceptGroupId)) throw new TierInputError(TIER_EXISTS, { sbt_name: TIER_EXISTS });
}

/** The tier write refused by the live-name indexes means another tier (or its group) has the name. */
function translateDuplicate(e: unknown): never {
  if (isUniqueViolation(e, 'grp_groups_tier_name_live') || isUniqueViolation(e, 'sbt_subscription_tiers_name_live')) {
    throw new TierInputError(TIER_EXISTS, { sbt_name: TIER_EXISTS });
  }
  throw e;
}

export interface CreateTierContext {
  db: Kysely<DB>;
  clock: Clock;
  registry: FeatureRegistry;
  /** The staff user creating the tier, recorded as the group's creator. */
  createdBy: number | null;
}

/**
 * SubscriptionTier.CreateNew: creates the tier and its group (category 'subscription_tier') in one
 * transaction (the caller's, when given one), refusing 'Tier already exists' when a live tier group of
 * that name exists. Returns the new sbt_subscription_tier_id.
 */
export async function createTier(ctx: CreateTierContext, input: Record<string, unknown>): Promise<number> {
  const name = requiredString(input, 'sbt_name');
  const displayName = requiredString(input, 'sbt_display_name');
  const level = tierLevel(input.sbt_tier_level);
  const features = input.sbt_features === undefined || input.sbt_features === null ? {} : validateTierFeatures(ctx.registry, input.sbt_features);
  const description = typeof input.sbt_description === 'string' ? input.sbt_description : null;
  const isActive = input.sbt_is_active === undefined || input.sbt_is_active === null ? true : input.sbt_is_active;
  if (typeof isActive !== 'boolean') throw new TierInputError('sbt_is_active must be a boolean', { sbt_is_active: 'must be a boolean' });
  const now = ctx.clock.now();
  return inTransaction(ctx.db, async (trx) => {
    await refuseExistingTierGroup(trx, name, null);
    try {
      const group = await trx
        .insertInto('grp_groups')
        .values({
          grp_name: name,
          grp_description: `Members of the ${displayName} tier`,
          grp_category: TIER_GROUP_CATEGORY,
          grp_usr_user_id_created: ctx.createdBy,
          grp_create_time: now,
          grp_update_time: now,
        })
        .returning('grp_group_id')
        .executeTakeFirstOrThrow();
      const tier = await trx
        .insertInto('sbt_subscription_tiers')
        .values({
          sbt_grp_group_id: group.grp_group_id,
          sbt_tier_level: level,
          sbt_name: name,
          sbt_display_name: displayName,
          sbt_description: description,
          sbt_features: JSON.stringify(features),
          sbt_is_active: isActive,
          sbt_create_time: now,
          sbt_update_time: now,
        })
        .returning('sbt_subscription_tier_id')
        .executeTakeFirstOrThrow();
      return tier.sbt_subscription_tier_id;
    } catch (e) {
      translateDuplicate(e);
    }
  });
}

/**
 * What must happen before a tier update is written: sbt_features validated against the definitions,
 * and a rename carried to the tier's group (refused when another live tier group has the name). Runs in
 * the caller's transaction; the CRUD update hook and updateTier both use it.
 */
export async function prepareTierUpdate(
  trx: Kysely<DB>,
  clock: Clock,
  registry: FeatureRegistry,
  stored: { sbt_grp_group_id: number; sbt_name: string },
  changes: Record<string, unknown>,
): Promise<void> {
  if ('sbt_features' in changes) {
    if (changes.sbt_features === null) throw new TierInputError('sbt_features must be a JSON object', { sbt_features: 'must be a JSON object' });
    validateTierFeatures(registry, changes.sbt_features);
  }
  if ('sbt_display_name' in changes) requiredString(changes, 'sbt_display_name');
  if ('sbt_tier_level' in changes) tierLevel(changes.sbt_tier_level);
  if ('sbt_name' in changes) {
    const name = requiredString(changes, 'sbt_name');
    if (name !== stored.sbt_name) {
      await refuseExistingTierGroup(trx, name, stored.sbt_grp_group_id);
      try {
        await trx
          .updateTable('grp_groups')
          .set({ grp_name: name, grp_update_time: clock.now() })
          .where('grp_group_id', '=', stored.sbt_grp_group_id)
          .execute();
      } catch (e) {
        translateDuplicate(e);
      }
    }
  }
}

export interface TierChanges {
  sbt_name?: string;
  sbt_display_name?: string;
  sbt_tier_level?: number;
  sbt_description?: string | null;
  sbt_features?: Record<string, FeatureValue>;
  sbt_is_active?: boolean;
}

/** Updates a tier for the admin screens: locks it, validates, renames its group, writes. */
export async function updateTier(db: Kysely<DB>, clock: Clock, registry: FeatureRegistry, tierId: number, changes: TierChanges): Promise<Tier> {
  return inTransaction(db, async (trx) => {
    const stored = await trx
      .selectFrom('sbt_subscription_tiers')
      .selectAll()
      .where('sbt_subscription_tier_id', '=', tierId)
      .where('sbt_delete_time', 'is', null)
      .forUpdate()
      .executeTakeFirst();
    if (!stored) throw new TierInputError(`No tier with id ${tierId}`, { sbt_subscription_tier_id: 'not found' });
    await prepareTierUpdate(trx, clock, registry, stored, changes as Record<string, unknown>);
    const { sbt_features, ...rest } = changes;
    try {
      return await trx
        .updateTable('sbt_subscription_tiers')
        .set({
          ...rest,
          ...(sbt_features !== undefined ? { sbt_features: JSON.stringify(sbt_features) } : {}),
          sbt_update_time: clock.now(),
        })
        .where('sbt_subscription_tier_id', '=', tierId)
        .returningAll()
        .executeTakeFirstOrThrow();
    } catch (e) {
      translateDuplicate(e);
    }
  });
}

/** A live tier by its internal name. */
export async function findTierByName(db: Kysely<DB>, name: string): Promise<Tier | undefined> {
  return db.selectFrom('sbt_subscription_tiers').selectAll().where('sbt_name', '=', name).where('sbt_delete_time', 'is', null).executeTakeFirst();
}

/** Live tiers, best last: by level, then name. */
export async function listTiers(db: Kysely<DB>, opts: { activeOnly?: boolean } = {}): Promise<Tier[]> {
  let q = db.selectFrom('sbt_subscription_tiers').selectAll().where('sbt_delete_time', 'is', null);
  if (opts.activeOnly) q = q.where('sbt_is_active', '=', true);
  return q.orderBy('sbt_tier_level').orderBy('sbt_name').execute();
}
