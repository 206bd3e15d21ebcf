import { listEvents } from '../../outbound/webhooks/endpoints.js';
import { defineAction } from '../define.js';
import { SUPERADMIN_READ } from './auth.js';

export default defineAction({
  name: 'webhook_event_list',
  description: 'Outbound events, newest first, with each one’s deliveries (superadmin); pass next_cursor back as cursor',
  mutates: false,
  auth: SUPERADMIN_READ,
  input: { cursor: { type: 'string', max_length: 40 } },
  async run({ input, db }) {
    return { data: await listEvents(db, input.cursor) };
  },
});
