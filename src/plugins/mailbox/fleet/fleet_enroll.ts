import { actingUser } from '../../../actions/account/user.js';
import { defineAction } from '../../../actions/define.js';
import { businessError, validationError } from '../../../http/errors.js';
import { withFleetRelayTables } from '../fleet-relay-tables.js';
import { fleetFeatures } from './features.js';
import { changeSlotStatus, findSlot, fleetData, recordSlotChange, slotDomains } from './slots.js';

/** A DNS name: dot-separated labels of letters, digits and inner hyphens, with at least two labels. */
const DOMAIN_RE = /^(?=.{1,253}$)(?:[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?\.)+[a-z][a-z0-9-]{0,61}[a-z0-9]$/;

/** The requested domains, lowercased and without repeats; a malformed one is a ValidationError. */
function normaliseDomains(raw: readonly string[]): string[] {
  const out: string[] = [];
  for (const given of raw) {
    const domain = given.trim().toLowerCase().replace(/\.$/, '');
    if (!DOMAIN_RE.test(domain)) throw validationError({ domains: `'${given}' is not a domain name` });
    if (!out.includes(domain)) out.push(domain);
  }
  return out;
}

/**
 * Enrolls the caller in the hosted relay fleet, or replaces the domains of their slot. Checked against the
 * caller's tier at this moment (DESIGN 11): mailbox_fleet_slot must be true and the domains at most
 * mailbox_fleet_max_domains. A slot in its grace window or suspended comes back to active when the tier
 * has the slot again. Every status change is written to change tracking.
 */
export default defineAction({
  name: 'mailbox/fleet_enroll',
  description: 'Enroll in the hosted mail relay fleet (or replace your slot\'s domains); needs the tier feature mailbox_fleet_slot',
  mutates: true,
  auth: { capability: 'write' },
  input: {
    domains: { type: 'array', required: true, min: 1, max: 10000, items: { type: 'string', max_length: 253 } },
  },
  async run({ input, user, db, clock, settings, featureRegistry }) {
    const me = actingUser(user);
    const domains = normaliseDomains(input.domains);
    const fdb = withFleetRelayTables(db);
    const features = await fleetFeatures(db, featureRegistry, me.usr_user_id);
    if (!features.slot) throw businessError('Your plan does not include a hosted relay fleet slot', { reason: 'fleet_slot_unavailable' });
    if (domains.length > features.maxDomains) {
      throw businessError(`Your plan allows ${features.maxDomains} fleet domains`, { reason: 'fleet_domain_limit', max_domains: features.maxDomains, requested: domains.length });
    }
    const taken = await fdb
      .selectFrom('mfd_mailbox_fleet_domains')
      .innerJoin('mfs_mailbox_fleet_slots', 'mfs_mailbox_fleet_slot_id', 'mfd_mfs_mailbox_fleet_slot_id')
      .select('mfd_domain')
      .where('mfd_domain', 'in', domains)
      .where('mfs_usr_user_id', '!=', me.usr_user_id)
      .orderBy('mfd_domain')
      .executeTakeFirst();
    if (taken) throw businessError(`${taken.mfd_domain} is enrolled by another customer`, { reason: 'domain_taken', domain: taken.mfd_domain });

    const now = clock.now();
    let slot = await findSlot(fdb, me.usr_user_id, true);
    if (!slot) {
      const row = await fdb
        .insertInto('mfs_mailbox_fleet_slots')
        .values({ mfs_usr_user_id: me.usr_user_id, mfs_status: 'active', mfs_last_check_time: now, mfs_create_time: now, mfs_update_time: now })
        .returning('mfs_mailbox_fleet_slot_id')
        .executeTakeFirstOrThrow();
      slot = { id: row.mfs_mailbox_fleet_slot_id, userId: me.usr_user_id, status: 'active', graceStartTime: null, suspendedTime: null, lastCheckTime: now, createTime: now };
      await recordSlotChange(fdb, slot, null, { to: 'active', reason: 'fleet_enrolled', at: now, changedBy: me.usr_user_id, metadata: { domains: domains.length } });
    } else if (slot.status !== 'active') {
      slot = await changeSlotStatus(fdb, slot, { to: 'active', reason: 'fleet_restored', at: now, changedBy: me.usr_user_id, metadata: { by: 'enroll' } });
    }
    await fdb.deleteFrom('mfd_mailbox_fleet_domains').where('mfd_mfs_mailbox_fleet_slot_id', '=', slot.id).execute();
    await fdb
      .insertInto('mfd_mailbox_fleet_domains')
      .values(domains.map((d) => ({ mfd_mfs_mailbox_fleet_slot_id: slot.id, mfd_domain: d, mfd_create_time: now })))
      .execute();
    const data = fleetData(slot, await slotDomains(fdb, slot.id), features, settings.int('mailbox_fleet_grace_hours'));
    return { data, message: 'Enrolled in the relay fleet.' };
  },
});
