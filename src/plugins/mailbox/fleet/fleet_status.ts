import { actingUser } from '../../../actions/account/user.js';
import { defineAction } from '../../../actions/define.js';
import { withFleetRelayTables } from '../fleet-relay-tables.js';
import { fleetFeatures } from './features.js';
import { findSlot, fleetData, slotDomains } from './slots.js';

/** The caller's fleet slot (status, domains, grace window) and the fleet features of their tier now. */
export default defineAction({
  name: 'mailbox/fleet_status',
  description: 'Your hosted relay fleet slot: status (active, grace, suspended), domains, grace window, and your tier\'s fleet features',
  mutates: false,
  auth: { capability: 'read' },
  async run({ user, db, settings, featureRegistry, caches }) {
    const me = actingUser(user);
    const fdb = withFleetRelayTables(db);
    const [slot, features] = await Promise.all([findSlot(fdb, me.usr_user_id), fleetFeatures(db, featureRegistry, me.usr_user_id, caches.userTiers)]);
    const domains = slot ? await slotDomains(fdb, slot.id) : [];
    return { data: fleetData(slot, domains, features, settings.int('mailbox_fleet_grace_hours')) };
  },
});
