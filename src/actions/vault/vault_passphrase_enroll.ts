import { vaultStatus } from '../../accounts/vault/unlockers.js';
import { insertPassphraseWrap, liveWraps, retireWraps } from '../../accounts/vault/vaults.js';
import { defineAction } from '../define.js';
import { BROWSER_ONLY, PASSWORD_INPUT } from './shared.js';
import { PASSPHRASE_MIN } from './vault_setup_verify.js';

/** Enrolls a passphrase, replacing any earlier one. */
export default defineAction({
  name: 'vault_passphrase_enroll',
  description: 'Enroll or replace the vault passphrase; needs step-up and an unlocked vault',
  auth: BROWSER_ONLY,
  mutates: true,
  input: { passphrase: { type: 'password', required: true, min: PASSPHRASE_MIN, max_length: 1024 }, ...PASSWORD_INPUT },
  vault: 'unlocked',
  step_up: 'passkey_or_password',
  async run(ctx) {
    const { user: me, web, vault, openVault: open } = ctx;
    const now = ctx.clock.now();
    const old = await liveWraps(ctx.db, vault.id, { type: 'passphrase' });
    await insertPassphraseWrap(ctx.db, open.vault, open.vault.generation, open.secretKey, ctx.input.passphrase, now);
    await retireWraps(ctx.db, old.map((w) => w.id), now);
    const times = await web.vault.times(ctx.db, me.usr_user_id);
    return { data: await vaultStatus(ctx.db, me.usr_user_id, { unlocked: times !== null, times }), message: 'Passphrase saved.' };
  },
});
