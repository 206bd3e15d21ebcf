import type { Kysely } from 'kysely';
import type { DB } from '../../../db/types.js';
import type { Clock } from '../../../lib/clock.js';
import type { FeatureRegistry } from '../../../tiers/feature-registry.js';
import { withFleetRelayTables, type FleetRelayDB } from '../fleet-relay-tables.js';
import { fleetFeatures } from './features.js';
import { changeSlotStatus, findSlot, graceEndsAt, slotBatch, type FleetSlot } from './slots.js';

const BATCH = 200;

export interface RecheckResult {
  checked: number;
  grace_started: number;
  suspended: number;
  restored: number;
}

/**
 * The periodic re-check (SPEC Events 4): each live slot's customer is checked for mailbox_fleet_slot.
 * A slot whose tier lost it enters its grace window; it is suspended only once the window
 * (mailbox_fleet_grace_hours from the first re-check that found it missing) has passed; a slot in grace or
 * suspended whose customer has the feature again is restored. Each slot is decided in its own transaction
 * under its row lock, so an enrollment at the same moment waits for it.
 */
export async function recheckFleetSlots(db: Kysely<DB>, clock: Clock, registry: FeatureRegistry, graceHours: number): Promise<RecheckResult> {
  const result: RecheckResult = { checked: 0, grace_started: 0, suspended: 0, restored: 0 };
  const fdb = withFleetRelayTables(db);
  let after = 0;
  for (;;) {
    const batch = await slotBatch(fdb, after, BATCH);
    if (batch.length === 0) break;
    after = batch[batch.length - 1]!.id;
    for (const listed of batch) {
      const outcome = await db.transaction().execute(async (core) => {
        const trx = withFleetRelayTables(core);
        const slot = await findSlot(trx, listed.userId, true);
        if (!slot || slot.id !== listed.id) return null;
        const now = clock.now();
        const features = await fleetFeatures(core, registry, slot.userId);
        const decided = await decide(trx, slot, features.slot, now, graceHours);
        await trx.updateTable('mfs_mailbox_fleet_slots').set({ mfs_last_check_time: now }).where('mfs_mailbox_fleet_slot_id', '=', slot.id).execute();
        return decided;
      });
      if (outcome === null) continue;
      result.checked++;
      if (outcome !== 'unchanged') result[outcome]++;
    }
  }
  return result;
}

async function decide(
  trx: Kysely<FleetRelayDB>,
  slot: FleetSlot,
  hasSlot: boolean,
  now: Date,
  graceHours: number,
): Promise<'unchanged' | 'grace_started' | 'suspended' | 'restored'> {
  if (hasSlot) {
    if (slot.status === 'active') return 'unchanged';
    await changeSlotStatus(trx, slot, { to: 'active', reason: 'fleet_restored', at: now, changedBy: null, metadata: { by: 'recheck' } });
    return 'restored';
  }
  if (slot.status === 'active') {
    await changeSlotStatus(trx, slot, { to: 'grace', reason: 'fleet_grace_started', at: now, changedBy: null, metadata: { grace_hours: graceHours } });
    return 'grace_started';
  }
  if (slot.status === 'grace') {
    const ends = graceEndsAt(slot, graceHours);
    if (ends && now.getTime() >= ends.getTime()) {
      await changeSlotStatus(trx, slot, { to: 'suspended', reason: 'fleet_suspended', at: now, changedBy: null, metadata: { grace_hours: graceHours } });
      return 'suspended';
    }
  }
  return 'unchanged';
}
