import { authError } from '../../http/errors.js';
import type { WebhookAdapter } from '../events.js';

export const iosStoreWebhook: WebhookAdapter = {
  source: 'ios_store',
  async verify() {
    throw authError(401, 'Not configured');
  },
};
