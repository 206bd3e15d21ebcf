import { authError } from '../http/errors.js';
import { TIER_GROUP_CATEGORY, isTierGroup } from '../tiers/groups.js';
import { col, defineModel, type Row } from './define.js';

export const TIER_GROUPS_READ_ONLY = 'Tier groups change only through the tier services';

const refuseTierGroups = () => authError(403, TIER_GROUPS_READ_ONLY);

/**
 * Group: staff only. A tier's group (category 'subscription_tier') is created, renamed and populated by
 * the tier services alone, so CRUD writes never touch one, nor make one.
 */
export const Group = defineModel({
  className: 'Group',
  table: 'grp_groups',
  prefix: 'grp',
  primaryKey: 'grp_group_id',
  owner: null,
  columns: {
    grp_group_id: col.serial(),
    grp_name: col.varchar(100, { required: true }),
    grp_description: col.text(),
    grp_usr_user_id_created: col.int(),
    grp_category: col.varchar(24),
    grp_create_time: col.timestamp(),
    grp_update_time: col.timestamp(),
    grp_delete_time: col.timestamp(),
  },
  exposure: { readable: true, writable: true, unwritable: ['grp_usr_user_id_created'] },
  checks: {
    // Decided from the row alone (checks may run inside the CRUD transaction): a tier group always
    // carries the category, and no CRUD write can take it off.
    write(row: Row, ctx) {
      if (ctx.viewer.current_user_permission < 5) throw authError(403, 'Staff only');
      if (row.grp_category === TIER_GROUP_CATEGORY) throw refuseTierGroups();
      return true;
    },
  },
  createNew: async (input, ctx) => {
    if (input.grp_category === TIER_GROUP_CATEGORY) throw refuseTierGroups();
    const now = ctx.clock.now();
    const row = await ctx.trx
      .insertInto('grp_groups')
      .values({
        grp_name: String(input.grp_name ?? ''),
        grp_description: typeof input.grp_description === 'string' ? input.grp_description : null,
        grp_category: typeof input.grp_category === 'string' ? input.grp_category : null,
        grp_usr_user_id_created: ctx.viewer.current_user_id,
        grp_create_time: now,
        grp_update_time: now,
      })
      .returning('grp_group_id')
      .executeTakeFirstOrThrow();
    return row.grp_group_id;
  },
  beforeUpdate: async (stored, changes, ctx) => {
    if (stored.grp_category === TIER_GROUP_CATEGORY || (await isTierGroup(ctx.trx, Number(stored.grp_group_id)))) throw refuseTierGroups();
    if (changes.grp_category === TIER_GROUP_CATEGORY) throw refuseTierGroups();
  },
});
