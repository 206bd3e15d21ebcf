import { passkeysOf } from '../../accounts/passkeys/credentials.js';
import { currentUnlockers } from '../../accounts/vault/unlockers.js';
import { businessError } from '../../http/errors.js';
import { defineAction } from '../define.js';
import { BROWSER_ONLY, beginPrfCeremony } from './shared.js';

/** Begins a passkey unlock: options for the passkeys that wrap the vault, with the PRF salt to evaluate. */
export default defineAction({
  name: 'vault_unlock_options',
  description: 'Begin unlocking the vault with a passkey',
  auth: BROWSER_ONLY,
  mutates: true,
  input: {},
  vault: 'set_up',
  async run(ctx) {
    const { user: me, web, vault } = ctx;
    const wrapped = new Set((await currentUnlockers(ctx.db, vault)).passkeys.map((w) => w.passkeyId));
    const passkeys = (await passkeysOf(ctx.db, me.usr_user_id)).filter((p) => wrapped.has(p.id));
    if (passkeys.length === 0) throw businessError('No passkey unlocks your vault; use a recovery code or your passphrase', { reason: 'no_passkey_unlocker' });
    return { data: await beginPrfCeremony(ctx, web, me, 'vault_unlock', passkeys) };
  },
});
