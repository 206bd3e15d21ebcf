import type { Kysely } from 'kysely';
import { formatTimestamp } from '../../../lib/time.js';
import type { FleetRelayDB, FleetSlotStatus } from '../fleet-relay-tables.js';
import type { FleetFeatures } from './features.js';

/** How a slot's status changes are written to the core's change-tracking table (cht_change_tracking). */
export const FLEET_SLOT_ENTITY = 'mailbox_fleet_slot';
export const FLEET_STATUS_FIELD = 'mfs_status';

/** Why a slot's status changed: a closed set. */
export type FleetChangeReason = 'fleet_enrolled' | 'fleet_grace_started' | 'fleet_suspended' | 'fleet_restored';

export interface FleetSlot {
  id: number;
  userId: number;
  status: FleetSlotStatus;
  graceStartTime: Date | null;
  suspendedTime: Date | null;
  lastCheckTime: Date | null;
  createTime: Date;
}

const SLOT_COLUMNS = [
  'mfs_mailbox_fleet_slot_id',
  'mfs_usr_user_id',
  'mfs_status',
  'mfs_grace_start_time',
  'mfs_suspended_time',
  'mfs_last_check_time',
  'mfs_create_time',
] as const;

type SlotRow = {
  mfs_mailbox_fleet_slot_id: number;
  mfs_usr_user_id: number;
  mfs_status: FleetSlotStatus;
  mfs_grace_start_time: Date | null;
  mfs_suspended_time: Date | null;
  mfs_last_check_time: Date | null;
  mfs_create_time: Date;
};

function toSlot(r: SlotRow): FleetSlot {
  return {
    id: r.mfs_mailbox_fleet_slot_id,
    userId: r.mfs_usr_user_id,
    status: r.mfs_status,
    graceStartTime: r.mfs_grace_start_time,
    suspendedTime: r.mfs_suspended_time,
    lastCheckTime: r.mfs_last_check_time,
    createTime: r.mfs_create_time,
  };
}

/** The customer's live slot; `lock` holds its row for the rest of the transaction. */
export async function findSlot(db: Kysely<FleetRelayDB>, userId: number, lock = false): Promise<FleetSlot | null> {
  let q = db.selectFrom('mfs_mailbox_fleet_slots').select(SLOT_COLUMNS).where('mfs_usr_user_id', '=', userId).where('mfs_delete_time', 'is', null);
  if (lock) q = q.forUpdate();
  const row = await q.executeTakeFirst();
  return row ? toSlot(row) : null;
}

/** Live slots after `afterId`, in id order, `limit` at a time (the re-check walks them in batches). */
export async function slotBatch(db: Kysely<FleetRelayDB>, afterId: number, limit: number): Promise<FleetSlot[]> {
  const rows = await db
    .selectFrom('mfs_mailbox_fleet_slots')
    .select(SLOT_COLUMNS)
    .where('mfs_delete_time', 'is', null)
    .where('mfs_mailbox_fleet_slot_id', '>', afterId)
    .orderBy('mfs_mailbox_fleet_slot_id')
    .limit(limit)
    .execute();
  return rows.map(toSlot);
}

export async function slotDomains(db: Kysely<FleetRelayDB>, slotId: number): Promise<string[]> {
  const rows = await db
    .selectFrom('mfd_mailbox_fleet_domains')
    .select('mfd_domain')
    .where('mfd_mfs_mailbox_fleet_slot_id', '=', slotId)
    .orderBy('mfd_domain')
    .execute();
  return rows.map((r) => r.mfd_domain);
}

/** When a slot in its grace window is suspended. */
export function graceEndsAt(slot: Pick<FleetSlot, 'graceStartTime'>, graceHours: number): Date | null {
  return slot.graceStartTime ? new Date(slot.graceStartTime.getTime() + graceHours * 3600_000) : null;
}

/**
 * Moves a slot to `to` and records the change in change tracking, in the caller's transaction. The grace
 * start is kept only while in grace; the suspension time only while suspended.
 */
export async function changeSlotStatus(
  db: Kysely<FleetRelayDB>,
  slot: FleetSlot,
  change: { to: FleetSlotStatus; reason: FleetChangeReason; at: Date; changedBy: number | null; metadata?: Record<string, unknown> },
): Promise<FleetSlot> {
  const graceStartTime = change.to === 'grace' ? (slot.graceStartTime ?? change.at) : null;
  const suspendedTime = change.to === 'suspended' ? change.at : null;
  await db
    .updateTable('mfs_mailbox_fleet_slots')
    .set({ mfs_status: change.to, mfs_grace_start_time: graceStartTime, mfs_suspended_time: suspendedTime, mfs_update_time: change.at })
    .where('mfs_mailbox_fleet_slot_id', '=', slot.id)
    .execute();
  await recordSlotChange(db, slot, slot.status, change);
  return { ...slot, status: change.to, graceStartTime, suspendedTime };
}

export async function recordSlotChange(
  db: Kysely<FleetRelayDB>,
  slot: Pick<FleetSlot, 'id' | 'userId'>,
  from: FleetSlotStatus | null,
  change: { to: FleetSlotStatus; reason: FleetChangeReason; at: Date; changedBy: number | null; metadata?: Record<string, unknown> },
): Promise<void> {
  await db
    .insertInto('cht_change_tracking')
    .values({
      cht_entity_type: FLEET_SLOT_ENTITY,
      cht_entity_id: slot.id,
      cht_usr_user_id: slot.userId,
      cht_field_name: FLEET_STATUS_FIELD,
      cht_old_value: from,
      cht_new_value: change.to,
      cht_change_time: change.at,
      cht_change_reason: change.reason,
      cht_reference_type: null,
      cht_reference_id: null,
      cht_changed_by_usr_user_id: change.changedBy,
      cht_metadata: JSON.stringify(change.metadata ?? {}),
    })
    .execute();
}

/** The answer of mailbox/fleet_enroll and mailbox/fleet_status. */
export function fleetData(slot: FleetSlot | null, domains: string[], features: FleetFeatures, graceHours: number) {
  const features_ = { mailbox_fleet_slot: features.slot, mailbox_fleet_max_domains: features.maxDomains };
  if (!slot) return { enrolled: false, slot: null, features: features_ };
  const graceEnds = graceEndsAt(slot, graceHours);
  return {
    enrolled: true,
    slot: {
      slot_id: slot.id,
      status: slot.status,
      domains,
      enrolled_time: formatTimestamp(slot.createTime),
      grace_start_time: slot.graceStartTime ? formatTimestamp(slot.graceStartTime) : null,
      grace_end_time: graceEnds ? formatTimestamp(graceEnds) : null,
      suspended_time: slot.suspendedTime ? formatTimestamp(slot.suspendedTime) : null,
      last_check_time: slot.lastCheckTime ? formatTimestamp(slot.lastCheckTime) : null,
    },
    features: features_,
  };
}
