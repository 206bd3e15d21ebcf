import { createEndpoint } from '../../outbound/webhooks/endpoints.js';
import { defineAction } from '../define.js';
import { SUBSCRIBABLE_TYPES, SUPERADMIN_WRITE } from './auth.js';

export default defineAction({
  name: 'webhook_endpoint_create',
  description: 'Add a webhook endpoint (superadmin); the answer holds its signing secret, shown only this once',
  mutates: true,
  auth: SUPERADMIN_WRITE,
  answer_holds_secret: true,
  input: {
    url: { type: 'string', required: true, max_length: 2048 },
    description: { type: 'string', max_length: 255 },
    event_types: { type: 'array', items: { type: 'string', options: SUBSCRIBABLE_TYPES } },
    enabled: { type: 'bool' },
  },
  async run({ input, db, clock, settings }) {
    const { endpoint, secret } = await createEndpoint({ db, clock, settings }, input);
    return { data: { ...endpoint, secret }, message: 'Endpoint created. Keep the secret: it is not shown again.' };
  },
});
