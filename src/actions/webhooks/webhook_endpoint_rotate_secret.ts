import { rotateEndpointSecret } from '../../outbound/webhooks/endpoints.js';
import { defineAction } from '../define.js';
import { SUPERADMIN_WRITE } from './auth.js';

export default defineAction({
  name: 'webhook_endpoint_rotate_secret',
  description: 'Give a webhook endpoint a new signing secret (superadmin); the old one keeps signing beside it for 24 hours',
  mutates: true,
  auth: SUPERADMIN_WRITE,
  answer_holds_secret: true,
  input: { endpoint_id: { type: 'int', required: true, min: 1 } },
  async run({ input, db, clock, settings }) {
    const { endpoint, secret } = await rotateEndpointSecret({ db, clock, settings }, input.endpoint_id);
    return { data: { ...endpoint, secret }, message: 'Secret rotated. The previous secret also signs until previous_secret_expires_time.' };
  },
});
