import { transactionError } from '../http/errors.js';
import { TierInputError } from '../tiers/errors.js';
import { createTier, prepareTierUpdate } from '../tiers/tiers.js';
import { col, defineModel } from './define.js';

/** A tier refusal as CRUD answers it: 400 TransactionError, each bad field (or feature key) in data.fields. */
async function asTransactionError<T>(fn: () => Promise<T>): Promise<T> {
  try {
    return await fn();
  } catch (e) {
    if (e instanceof TierInputError) throw transactionError(e.message, 400, Object.keys(e.fields).length > 0 ? { fields: e.fields } : undefined);
    throw e;
  }
}

/**
 * SubscriptionTier: public read, staff write. CreateNew creates the tier's group in the same
 * transaction; a rename follows to the group; sbt_features is checked against the declared features.
 */
export const SubscriptionTier = defineModel({
  className: 'SubscriptionTier',
  table: 'sbt_subscription_tiers',
  prefix: 'sbt',
  primaryKey: 'sbt_subscription_tier_id',
  owner: null,
  columns: {
    sbt_subscription_tier_id: col.serial(),
    sbt_grp_group_id: col.int(),
    sbt_tier_level: col.int({ required: true }),
    sbt_name: col.varchar(100, { required: true }),
    sbt_display_name: col.varchar(100, { required: true }),
    sbt_description: col.text(),
    sbt_features: col.jsonb(),
    sbt_is_active: col.bool(),
    sbt_create_time: col.timestamp(),
    sbt_update_time: col.timestamp(),
    sbt_delete_time: col.timestamp(),
  },
  // The group link is made by CreateNew and never rewritten.
  exposure: { readable: true, writable: true, publicRead: true, unwritable: ['sbt_grp_group_id'] },
  createNew: (input, ctx) =>
    asTransactionError(() =>
      createTier({ db: ctx.trx, clock: ctx.clock, registry: ctx.featureRegistry, createdBy: ctx.viewer.current_user_id }, input),
    ),
  beforeUpdate: (stored, changes, ctx) =>
    asTransactionError(() =>
      prepareTierUpdate(
        ctx.trx,
        ctx.clock,
        ctx.featureRegistry,
        { sbt_grp_group_id: Number(stored.sbt_grp_group_id), sbt_name: String(stored.sbt_name) },
        changes,
      ),
    ),
});
