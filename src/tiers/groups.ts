import type { Kysely, Selectable } from 'kysely';
import type { DB, GroupsTable } from '../db/types.js';
import { TierInputError } from './errors.js';

export const TIER_GROUP_CATEGORY = 'subscription_tier';

export type Group = Selectable<GroupsTable>;

/** The contract's group query option keys. */
export interface GroupQueryOptions {
  /** grp_name */
  group_name?: string;
  /** grp_category */
  category?: string;
  /** grp_group_id */
  group_id?: number;
  /**
   * The contract maps this to grp_usr_user_id; the group's user column is grp_usr_user_id_created (the
   * user who created the group), so that is what it filters.
   */
  user_id?: number;
  /** true: only soft-deleted groups; false: only live groups; absent: both. */
  deleted?: boolean;
}

const OPTION_KEYS = new Set(['group_name', 'category', 'group_id', 'user_id', 'deleted']);

/** Looks groups up by the contract's option keys; an unknown key is refused rather than ignored. */
export async function findGroups(db: Kysely<DB>, options: GroupQueryOptions): Promise<Group[]> {
  for (const key of Object.keys(options)) {
    if (!OPTION_KEYS.has(key)) throw new TierInputError(`Unknown group query option '${key}'`, { [key]: 'is not a group query option' });
  }
  let q = db.selectFrom('grp_groups').selectAll();
  if (options.group_name !== undefined) q = q.where('grp_name', '=', options.group_name);
  if (options.category !== undefined) q = q.where('grp_category', '=', options.category);
  if (options.group_id !== undefined) q = q.where('grp_group_id', '=', options.group_id);
  if (options.user_id !== undefined) q = q.where('grp_usr_user_id_created', '=', options.user_id);
  if (options.deleted === true) q = q.where('grp_delete_time', 'is not', null);
  if (options.deleted === false) q = q.where('grp_delete_time', 'is', null);
  return q.orderBy('grp_group_id').execute();
}

/** Whether a group is a tier's group (by category, or by a tier row pointing at it). */
export async function isTierGroup(db: Kysely<DB>, groupId: number): Promise<boolean> {
  const row = await db
    .selectFrom('grp_groups')
    .leftJoin('sbt_subscription_tiers', 'sbt_grp_group_id', 'grp_group_id')
    .select(['grp_category', 'sbt_subscription_tier_id'])
    .where('grp_group_id', '=', groupId)
    .executeTakeFirst();
  return row !== undefined && (row.grp_category === TIER_GROUP_CATEGORY || row.sbt_subscription_tier_id !== null);
}
