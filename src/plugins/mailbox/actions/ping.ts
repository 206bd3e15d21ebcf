import { defineAction } from '../../../actions/define.js';

/** The mailbox plugin's first action: proves its namespace answers while the plugin is active. */
export default defineAction({
  name: 'mailbox/ping',
  description: 'Check that the mailbox plugin answers actions',
  mutates: false,
  auth: { capability: 'read' },
  async run({ clock }) {
    return { data: { plugin: 'mailbox', time: clock.now() } };
  },
});
