import { definePlugin } from '../modules.js';
import ping from './actions/ping.js';

/** The mailbox plugin: every part of it registers here (src/plugins/modules.ts). */
export default definePlugin({
  name: 'mailbox',
  actions: [ping],
});
