import { deleteEndpoint } from '../../outbound/webhooks/endpoints.js';
import { defineAction } from '../define.js';
import { SUPERADMIN_WRITE } from './auth.js';

export default defineAction({
  name: 'webhook_endpoint_delete',
  description: 'Delete a webhook endpoint with its deliveries and attempt log (superadmin)',
  mutates: true,
  auth: { ...SUPERADMIN_WRITE, capability: 'delete' },
  input: { endpoint_id: { type: 'int', required: true, min: 1 } },
  async run({ input, db }) {
    await deleteEndpoint(db, input.endpoint_id);
    return { data: { endpoint_id: input.endpoint_id }, message: 'Endpoint deleted.' };
  },
});
