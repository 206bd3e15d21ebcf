import { passkeysOf } from '../../accounts/passkeys/credentials.js';
import { vaultOf } from '../../accounts/vault/vaults.js';
import { businessError } from '../../http/errors.js';
import { defineAction } from '../define.js';
import { BROWSER_ONLY, PASSWORD_INPUT, beginPrfCeremony, requirePassword } from './shared.js';

/**
 * Begins vault setup: checks the account password and opens a 5-minute setup ceremony for this session.
 * The answer is authentication options for the caller's PRF-capable passkeys (the browser evaluates the
 * vault's PRF salt so the verify step can wrap the vault under one of them); with none, setup goes on with
 * recovery codes (and an optional passphrase) only.
 */
export default defineAction({
  name: 'vault_setup_options',
  description: 'Begin vault setup (needs the account password)',
  auth: BROWSER_ONLY,
  mutates: true,
  input: { password: { ...PASSWORD_INPUT.password, required: true } },
  login_as: 'A vault cannot be set up',
  async run(ctx) {
    const { user: me, web } = ctx;
    await requirePassword(ctx, me, ctx.input.password);
    if (await vaultOf(ctx.db, me.usr_user_id)) throw businessError('Your vault is already set up', { reason: 'already_set_up' });
    const prfPasskeys = (await passkeysOf(ctx.db, me.usr_user_id)).filter((p) => p.prfCapable);
    return { data: await beginPrfCeremony(ctx, web, me, 'vault_setup', prfPasskeys) };
  },
});
