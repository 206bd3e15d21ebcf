import { vaultStatus } from '../../accounts/vault/unlockers.js';
import { defineAction } from '../define.js';
import { BROWSER_ONLY } from './shared.js';

/** Whether a vault is set up and unlocked in this session, its unlockers and the window's expiry. */
export default defineAction({
  name: 'vault_status',
  description: 'Report vault setup/unlock status and unlockers',
  auth: BROWSER_ONLY,
  mutates: false,
  input: {},
  async run({ user, db, web }) {
    const times = await web.vault.times(db, user.usr_user_id);
    return { data: await vaultStatus(db, user.usr_user_id, { unlocked: times !== null, times }) };
  },
});
