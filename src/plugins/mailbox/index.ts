import { definePlugin } from '../../plugin-kit/index.js';
import create from './actions/create.js';
import mailbox_import from './actions/import.js';
import mailboxes from './actions/mailboxes.js';
import message_timeline from './actions/message_timeline.js';
import ping from './actions/ping.js';
import send from './actions/send.js';
import thread from './actions/thread.js';
import thread_action from './actions/thread_action.js';
import thread_list from './actions/thread_list.js';
import fleetEnroll from './fleet/fleet_enroll.js';
import fleetStatus from './fleet/fleet_status.js';
import { fleetSettings } from './fleet/settings.js';
import { fleetRecheckTask } from './fleet/task.js';
import { levelsOf } from './mailboxes.js';
import { resealBatch, resealForRotation } from './messages.js';
import migration0001 from './migrations/0001_mailboxes.js';
import * as fleetRelayMigration from './migrations/0002_fleet_relay.js';
import { Mailbox } from './models.js';
import { relayChannel } from './relay/channel.js';
import { RELAY_USAGE, relayCommand } from './relay/cli.js';
import { relayEndpoints } from './relay/openapi.js';
import { relaySettings } from './relay/settings.js';
import { mailboxSettings } from './settings.js';
import { startMailboxListeners } from './smtp.js';
import { mailPages } from './web/page.js';

/** The mailbox plugin: every part of it is declared here; src/boot/plugins.ts loads it. */
export default definePlugin({
  name: 'mailbox',
  settings: [...mailboxSettings, ...fleetSettings, ...relaySettings],
  models: [Mailbox],
  actions: [ping, mailboxes, thread_list, thread, thread_action, message_timeline, send, mailbox_import, create, fleetEnroll, fleetStatus],
  migrations: { '0001_mailboxes': migration0001, '0002_fleet_relay': fleetRelayMigration },
  protectionLevels: levelsOf,
  contentResealer: resealForRotation,
  // The SMTP receiver (mailbox_smtp_port), in the server process only.
  start: startMailboxListeners,
  // The relay channel: GET /relay/bundle, POST /relay/born.
  apiRoutes: relayChannel,
  openApi: [...relayEndpoints],
  webRoutes: mailPages,
  memberLinks: [{ label: 'Mail', path: '/mail' }],
  tasks: (services) => [
    {
      name: 'mailbox_reseal',
      description: 'Seal the messages of mailboxes whose security level was raised above standard, a batch at a time',
      intervalSeconds: 60,
      run: async ({ db }) => ({ sealed: await resealBatch(db) }),
    },
    fleetRecheckTask(services),
  ],
  cli: { relay: { usage: RELAY_USAGE, group: relayCommand } },
});
