import { storeAccountToken } from '../../store/accounts.js';
import { storeActive } from '../../settings/store-active.js';
import { businessError } from '../../http/errors.js';
import { defineAction } from '../define.js';

/**
 * The signed-in user's store account token, for native apps to pass to the app stores as
 * appAccountToken (iOS) and obfuscatedExternalAccountId (Android): store notifications then name this
 * user. Stable once created.
 */
export default defineAction({
  name: 'store_account_token',
  description: 'The account token native apps give the app stores so purchases map to this user',
  requires_setting: 'subscriptions_active',
  mutates: true,
  async run({ user, db, settings }) {
    if (!storeActive(settings)) throw businessError('The store is not open');
    return { data: { app_account_token: await storeAccountToken(db, user!.usr_user_id) }, message: '' };
  },
});
