import { definePlugin } from '../modules.js';
import ping from './actions/ping.js';
import fleetEnroll from './fleet/fleet_enroll.js';
import fleetStatus from './fleet/fleet_status.js';
import { fleetSettings } from './fleet/settings.js';
import { fleetRecheckTask } from './fleet/task.js';
import * as fleetRelayMigration from './migrations/0002_fleet_relay.js';
import { relayChannel } from './relay/channel.js';
import { RELAY_USAGE, relayCommand } from './relay/cli.js';
import { relayEndpoints } from './relay/openapi.js';
import { relaySettings } from './relay/settings.js';

/** The mailbox plugin: every part of it registers here (src/plugins/modules.ts). */
export default definePlugin({
  name: 'mailbox',
  settings: [
    ...fleetSettings,
    ...relaySettings,
  ],
  actions: [
    ping,
    fleetEnroll,
    fleetStatus,
  ],
  migrations: {
    '0002_fleet_relay': fleetRelayMigration,
  },
  apiRoutes: relayChannel,
  openApi: [
    ...relayEndpoints,
  ],
  tasks: (services) => [
    fleetRecheckTask(services),
  ],
  cli: {
    relay: { usage: RELAY_USAGE, group: relayCommand },
  },
});
