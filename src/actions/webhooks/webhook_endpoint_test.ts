import { sendTestEvent } from '../../outbound/webhooks/endpoints.js';
import { defineAction } from '../define.js';
import { SUPERADMIN_WRITE } from './auth.js';

export default defineAction({
  name: 'webhook_endpoint_test',
  description: 'Send a `test` event to one webhook endpoint (superadmin)',
  mutates: true,
  auth: SUPERADMIN_WRITE,
  input: { endpoint_id: { type: 'int', required: true, min: 1 } },
  async run({ input, db, clock, settings }) {
    return { data: await sendTestEvent({ db, clock, settings }, input.endpoint_id), message: 'Test event queued.' };
  },
});
