import { currentUnlockers, vaultStatus } from '../../accounts/vault/unlockers.js';
import { insertPasskeyWrap } from '../../accounts/vault/vaults.js';
import { businessError } from '../../http/errors.js';
import { defineAction } from '../define.js';
import { CREDENTIAL_INPUT } from '../passkeys/shared.js';
import { BROWSER_ONLY, PRF_OUTPUT_INPUT, prfOutputOf, requireUnlocked, takeCeremony, verifiedPasskey } from './shared.js';

/** Completes adding a passkey unlocker: wraps the open vault's secret under the passkey's PRF output. */
export default defineAction({
  name: 'vault_add_passkey_verify',
  description: 'Complete adding a passkey as a vault unlocker',
  auth: BROWSER_ONLY,
  mutates: true,
  input: { ...CREDENTIAL_INPUT, prf_output: { ...PRF_OUTPUT_INPUT.prf_output, required: true } },
  vault: 'set_up',
  async run(ctx) {
    const { user: me, web, vault } = ctx;
    const challenge = await takeCeremony(ctx, web, me, 'vault_add');
    const prf = prfOutputOf(ctx.input.prf_output);
    const open = await requireUnlocked(ctx, web, me.usr_user_id);
    const passkey = await verifiedPasskey(ctx, web, me, ctx.input, challenge);
    if (!passkey.prfCapable) throw businessError('This passkey cannot unlock a vault (no PRF support)', { reason: 'prf_unsupported' });
    if ((await currentUnlockers(ctx.db, vault)).passkeys.some((w) => w.passkeyId === passkey.id)) {
      throw businessError('This passkey already unlocks your vault', { reason: 'already_added' });
    }
    await insertPasskeyWrap(ctx.db, open.vault, open.vault.generation, open.secretKey, passkey.id, prf, ctx.clock.now());
    const times = await web.vault.times(ctx.db, me.usr_user_id);
    return { data: await vaultStatus(ctx.db, me.usr_user_id, { unlocked: times !== null, times }), message: 'Passkey added to your vault.' };
  },
});
