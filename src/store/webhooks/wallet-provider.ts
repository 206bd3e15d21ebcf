import { authError } from '../../http/errors.js';
import type { WebhookAdapter } from '../events.js';

export const walletProviderWebhook: WebhookAdapter = {
  source: 'wallet_provider',
  async verify() {
    throw authError(401, 'Not configured');
  },
};
