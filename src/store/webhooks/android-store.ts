import { authError } from '../../http/errors.js';
import type { WebhookAdapter } from '../events.js';

export const androidStoreWebhook: WebhookAdapter = {
  source: 'android_store',
  async verify() {
    throw authError(401, 'Not configured');
  },
};
