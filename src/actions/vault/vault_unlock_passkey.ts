import { kekFromPrf } from '../../accounts/vault/crypto.js';
import { currentUnlockers } from '../../accounts/vault/unlockers.js';
import { openAnyWrap } from '../../accounts/vault/vaults.js';
import { businessError } from '../../http/errors.js';
import { defineAction } from '../define.js';
import { CREDENTIAL_INPUT } from '../passkeys/shared.js';
import { BROWSER_ONLY, PRF_OUTPUT_INPUT, prfOutputOf, takeCeremony, verifiedPasskey } from './shared.js';
import { openedAnswer } from './unlock.js';

/** Completes a passkey unlock: the assertion proves the passkey, its PRF output unwraps the vault. */
export default defineAction({
  name: 'vault_unlock_passkey',
  description: 'Complete unlocking the vault with a passkey',
  auth: BROWSER_ONLY,
  mutates: false,
  input: { ...CREDENTIAL_INPUT, prf_output: { ...PRF_OUTPUT_INPUT.prf_output, required: true } },
  vault: 'set_up',
  async run(ctx) {
    const { user: me, web, vault } = ctx;
    const challenge = await takeCeremony(ctx, web, me, 'vault_unlock');
    const prf = prfOutputOf(ctx.input.prf_output);
    const passkey = await verifiedPasskey(ctx, web, me, ctx.input, challenge);
    const wraps = (await currentUnlockers(ctx.db, vault)).passkeys.filter((w) => w.passkeyId === passkey.id);
    const opened = await openAnyWrap(wraps, (salt) => kekFromPrf(prf, salt));
    if (!opened) {
      await ctx.recordFailedAuth();
      throw businessError('This passkey did not unlock your vault', { reason: 'unlock_failed' });
    }
    return openedAnswer(ctx, web, me, vault, opened.secretKey);
  },
});
