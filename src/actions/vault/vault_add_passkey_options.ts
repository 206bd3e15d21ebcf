import { passkeysOf } from '../../accounts/passkeys/credentials.js';
import { currentUnlockers } from '../../accounts/vault/unlockers.js';
import { businessError } from '../../http/errors.js';
import { defineAction } from '../define.js';
import { BROWSER_ONLY, beginPrfCeremony } from './shared.js';

/**
 * Begins adding a passkey as an unlocker: options for the caller's PRF-capable passkeys that do not wrap
 * the vault yet (enroll the passkey itself with passkey_register_* first). The vault must be unlocked.
 */
export default defineAction({
  name: 'vault_add_passkey_options',
  description: 'Begin adding another PRF-capable passkey as a vault unlocker; the vault must be unlocked',
  auth: BROWSER_ONLY,
  mutates: true,
  input: {},
  vault: 'unlocked',
  async run(ctx) {
    const { user: me, web, vault } = ctx;
    const wrapped = new Set((await currentUnlockers(ctx.db, vault)).passkeys.map((w) => w.passkeyId));
    const candidates = (await passkeysOf(ctx.db, me.usr_user_id)).filter((p) => p.prfCapable && !wrapped.has(p.id));
    if (candidates.length === 0) {
      throw businessError('None of your passkeys can be added: enroll a PRF-capable passkey first', { reason: 'no_prf_passkey' });
    }
    return { data: await beginPrfCeremony(ctx, web, me, 'vault_add', candidates) };
  },
});
