import type { TaskDefinition } from '../../../tasks/scheduler.js';
import type { PluginTaskServices } from '../../../plugin-kit/index.js';
import { recheckFleetSlots } from './recheck.js';

/** Task mailbox_fleet_recheck: the periodic re-check of every fleet slot's tier feature (hourly). */
export function fleetRecheckTask(services: PluginTaskServices): TaskDefinition {
  return {
    name: 'mailbox_fleet_recheck',
    description: "Re-check each hosted relay fleet slot's mailbox_fleet_slot feature; suspend after the grace window, restore when it returns",
    intervalSeconds: 3600,
    run: async ({ db, clock }) => ({ ...(await recheckFleetSlots(db, clock, services.tiers.registry, services.settings.int('mailbox_fleet_grace_hours'))) }),
  };
}
