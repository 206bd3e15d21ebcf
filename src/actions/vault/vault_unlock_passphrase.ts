import { kekFromPassphrase } from '../../accounts/vault/crypto.js';
import { currentUnlockers } from '../../accounts/vault/unlockers.js';
import { openAnyWrap } from '../../accounts/vault/vaults.js';
import { businessError } from '../../http/errors.js';
import { defineAction } from '../define.js';
import { BROWSER_ONLY, PASSWORD_INPUT, requirePassword } from './shared.js';
import { openedAnswer } from './unlock.js';

/** Unlocks with the account password and the enrolled passphrase. */
export default defineAction({
  name: 'vault_unlock_passphrase',
  description: 'Unlock the vault with the enrolled passphrase (and the account password)',
  auth: BROWSER_ONLY,
  mutates: false,
  input: { password: { ...PASSWORD_INPUT.password, required: true }, passphrase: { type: 'password', required: true, max_length: 1024 } },
  vault: 'set_up',
  async run(ctx) {
    const { user: me, web, vault } = ctx;
    await requirePassword(ctx, me, ctx.input.password);
    const { passphrase } = await currentUnlockers(ctx.db, vault);
    if (!passphrase) throw businessError('No passphrase is enrolled for your vault', { reason: 'no_passphrase' });
    const opened = await openAnyWrap([passphrase], (salt) => kekFromPassphrase(ctx.input.passphrase, salt));
    if (!opened) {
      await ctx.recordFailedAuth();
      throw businessError('The passphrase did not unlock your vault', { reason: 'unlock_failed' });
    }
    return openedAnswer(ctx, web, me, vault, opened.secretKey);
  },
});
