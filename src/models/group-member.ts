import { authError } from '../http/errors.js';
import { isTierGroup } from '../tiers/groups.js';
import { col, defineModel, type Row } from './define.js';
import { TIER_GROUPS_READ_ONLY } from './group.js';

const refuseTierGroups = () => authError(403, TIER_GROUPS_READ_ONLY);

async function touchesTierGroup(row: Row, db: Parameters<typeof isTierGroup>[0]): Promise<boolean> {
  if (row.grm_sbt_subscription_tier_id !== null && row.grm_sbt_subscription_tier_id !== undefined) return true;
  const groupId = Number(row.grm_grp_group_id);
  return Number.isInteger(groupId) && groupId > 0 && (await isTierGroup(db, groupId));
}

/**
 * GroupMember: staff only. grm_foreign_key_id is the member's user id; DELETE removes the membership.
 * Tier memberships are made and ended by the tier services (the grant and removal paths, manual assignment), never over CRUD.
 */
export const GroupMember = defineModel({
  className: 'GroupMember',
  table: 'grm_group_members',
  prefix: 'grm',
  primaryKey: 'grm_group_member_id',
  owner: null,
  deleteColumn: null,
  // Memberships are links (the platform removes them outright); tier memberships stay refused by the write check.
  deleteRemovesRow: true,
  columns: {
    grm_group_member_id: col.serial(),
    grm_grp_group_id: col.bigint({ required: true }),
    grm_foreign_key_id: col.bigint({ required: true }),
    grm_create_time: col.timestamp(),
    grm_assigned_time: col.timestamp(),
    grm_assignment_method: col.varchar(10, { options: ['purchase', 'manual', 'other'] }),
    grm_subscription_status: col.varchar(20, { options: ['active', 'cancelled', 'expired', 'refunded', 'replaced'] }),
    grm_sbt_subscription_tier_id: col.bigint(),
  },
  exposure: { readable: true, writable: true, unwritable: ['grm_sbt_subscription_tier_id', 'grm_subscription_status'] },
  checks: {
    // Decided from the row alone (checks may run inside the CRUD transaction); CreateNew and the update
    // hook look the target group up in the transaction.
    write(row: Row, ctx) {
      if (ctx.viewer.current_user_permission < 5) throw authError(403, 'Staff only');
      if (row.grm_sbt_subscription_tier_id !== null && row.grm_sbt_subscription_tier_id !== undefined) throw refuseTierGroups();
      return true;
    },
  },
  createNew: async (input, ctx) => {
    if (await touchesTierGroup(input, ctx.trx)) throw refuseTierGroups();
    const now = ctx.clock.now();
    const method = input.grm_assignment_method;
    const row = await ctx.trx
      .insertInto('grm_group_members')
      .values({
        grm_grp_group_id: Number(input.grm_grp_group_id),
        grm_foreign_key_id: Number(input.grm_foreign_key_id),
        grm_create_time: now,
        grm_assigned_time: now,
        grm_assignment_method: method === 'purchase' || method === 'other' ? method : 'manual',
      })
      .returning('grm_group_member_id')
      .executeTakeFirstOrThrow();
    return row.grm_group_member_id;
  },
  beforeUpdate: async (stored, changes, ctx) => {
    if (await touchesTierGroup(stored, ctx.trx)) throw refuseTierGroups();
    if ('grm_grp_group_id' in changes && (await touchesTierGroup({ grm_grp_group_id: changes.grm_grp_group_id }, ctx.trx))) throw refuseTierGroups();
  },
});
