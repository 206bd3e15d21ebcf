import { definePlugin } from '../modules.js';
import create from './actions/create.js';
import mailbox_import from './actions/import.js';
import mailboxes from './actions/mailboxes.js';
import message_timeline from './actions/message_timeline.js';
import ping from './actions/ping.js';
import send from './actions/send.js';
import thread from './actions/thread.js';
import thread_action from './actions/thread_action.js';
import thread_list from './actions/thread_list.js';
import { levelsOf } from './mailboxes.js';
import { resealBatch, resealForRotation } from './messages.js';
import migration0001 from './migrations/0001_mailboxes.js';
import { Mailbox } from './models.js';
import { mailboxSettings } from './settings.js';
import { startMailboxListeners } from './smtp.js';
import { mailPages } from './web/page.js';

/** The mailbox plugin: every part of it registers here (src/plugins/modules.ts). */
export default definePlugin({
  name: 'mailbox',
  // --- mailboxes, threads, messages (h-mailbox) ---
  settings: [...mailboxSettings],
  models: [Mailbox],
  actions: [ping, mailboxes, thread_list, thread, thread_action, message_timeline, send, mailbox_import, create],
  migrations: { '0001_mailboxes': migration0001 },
  protectionLevels: levelsOf,
  contentResealer: resealForRotation,
  start: startMailboxListeners,
  webRoutes: mailPages,
  tasks: () => [
    {
      name: 'mailbox_reseal',
      description: 'Seal the messages of mailboxes whose security level was raised above standard, a batch at a time',
      intervalSeconds: 60,
      run: async ({ db }) => ({ sealed: await resealBatch(db) }),
    },
  ],
  // --- end mailboxes ---
});
