import { floorRefusal, vaultStatus } from '../../accounts/vault/unlockers.js';
import { liveWraps, retireWraps } from '../../accounts/vault/vaults.js';
import { businessError } from '../../http/errors.js';
import { defineAction } from '../define.js';
import { BROWSER_ONLY, PASSWORD_INPUT } from './shared.js';

/** Removes the passphrase unlocker, unless that would break the unlocker floor. */
export default defineAction({
  name: 'vault_passphrase_remove',
  description: 'Remove the vault passphrase; needs a recent step-up',
  auth: BROWSER_ONLY,
  mutates: true,
  input: PASSWORD_INPUT,
  vault: 'set_up',
  step_up: 'passkey_or_password',
  async run(ctx) {
    const { user: me, web, vault } = ctx;
    const wraps = await liveWraps(ctx.db, vault.id, { type: 'passphrase' });
    if (wraps.length === 0) throw businessError('No passphrase is enrolled for your vault', { reason: 'no_passphrase' });
    const refusal = await floorRefusal(ctx.db, vault, { passphrase: true });
    if (refusal) throw businessError(refusal.message, { reason: refusal.reason });
    await retireWraps(ctx.db, wraps.map((w) => w.id), ctx.clock.now());
    const times = await web.vault.times(ctx.db, me.usr_user_id);
    return { data: await vaultStatus(ctx.db, me.usr_user_id, { unlocked: times !== null, times }), message: 'Passphrase removed.' };
  },
});
