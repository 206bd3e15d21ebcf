import { listEndpoints } from '../../outbound/webhooks/endpoints.js';
import { defineAction } from '../define.js';
import { SUPERADMIN_READ } from './auth.js';

export default defineAction({
  name: 'webhook_endpoint_list',
  description: 'Every webhook endpoint, without secrets (superadmin)',
  mutates: false,
  auth: SUPERADMIN_READ,
  async run({ db }) {
    return { data: { endpoints: await listEndpoints(db) } };
  },
});
