import { currentUnlockers } from '../../accounts/vault/unlockers.js';
import { passkeysOf } from '../../accounts/passkeys/credentials.js';
import { defineAction } from '../define.js';
import { BROWSER_ONLY, beginPrfCeremony } from './shared.js';

/**
 * Begins a key rotation (the vault must be unlocked): options for the passkeys that unlock the vault, so
 * the verify step can wrap the new generation under the one used. Without a passkey unlocker the verify
 * step takes the account password instead.
 */
export default defineAction({
  name: 'vault_rotate_options',
  description: 'Begin vault key rotation',
  auth: BROWSER_ONLY,
  mutates: true,
  input: {},
  vault: 'unlocked',
  async run(ctx) {
    const { user: me, web, vault } = ctx;
    const wrapped = new Set((await currentUnlockers(ctx.db, vault)).passkeys.map((w) => w.passkeyId));
    const passkeys = (await passkeysOf(ctx.db, me.usr_user_id)).filter((p) => wrapped.has(p.id));
    return { data: await beginPrfCeremony(ctx, web, me, 'vault_rotate', passkeys) };
  },
});
