import { updateEndpoint } from '../../outbound/webhooks/endpoints.js';
import { defineAction } from '../define.js';
import { SUBSCRIBABLE_TYPES, SUPERADMIN_WRITE } from './auth.js';

export default defineAction({
  name: 'webhook_endpoint_update',
  description: 'Change a webhook endpoint (superadmin): URL, description, event types, enabled; enabling clears a disable',
  mutates: true,
  auth: SUPERADMIN_WRITE,
  input: {
    endpoint_id: { type: 'int', required: true, min: 1 },
    url: { type: 'string', max_length: 2048 },
    description: { type: 'string', max_length: 255 },
    event_types: { type: 'array', items: { type: 'string', options: SUBSCRIBABLE_TYPES } },
    enabled: { type: 'bool' },
  },
  async run({ input, db, clock, settings }) {
    return { data: await updateEndpoint({ db, clock, settings }, input.endpoint_id, input), message: 'Endpoint saved.' };
  },
});
