import { generateKeypair } from '../../accounts/vault/crypto.js';
import { createVault, insertPassphraseWrap, insertPasskeyWrap, insertRecoveryCodes, vaultOf } from '../../accounts/vault/vaults.js';
import { vaultStatus } from '../../accounts/vault/unlockers.js';
import { businessError, validationError } from '../../http/errors.js';
import { defineAction } from '../define.js';
import { BROWSER_ONLY, OPTIONAL_CREDENTIAL_INPUT, PRF_OUTPUT_INPUT, credentialOf, prfOutputOf, takeCeremony, verifiedPasskey } from './shared.js';

export const PASSPHRASE_MIN = 12;

/**
 * Completes setup within the session's setup ceremony: a fresh X25519 keypair, the secret wrapped under 10
 * recovery codes (shown once in this answer, which an Idempotency-Key replay keeps only sealed), an
 * optional passphrase, and the passkey whose assertion and PRF output came with the request; the window
 * opens.
 */
export default defineAction({
  name: 'vault_setup_verify',
  description: 'Complete vault setup: keypair, recovery codes, optional passphrase, open window',
  auth: BROWSER_ONLY,
  mutates: true,
  input: {
    acknowledge_loss: { type: 'bool', required: true },
    passphrase: { type: 'password', min: PASSPHRASE_MIN, max_length: 1024 },
    ...OPTIONAL_CREDENTIAL_INPUT,
    ...PRF_OUTPUT_INPUT,
  },
  async run(ctx) {
    const { input, db, clock, user: me, web } = ctx;
    if (input.acknowledge_loss !== true) {
      throw validationError({ acknowledge_loss: 'must be true: without an unlocker, sealed data cannot be recovered by anyone' });
    }
    const challenge = await takeCeremony(ctx, web, me, 'vault_setup');
    if (await vaultOf(db, me.usr_user_id)) throw businessError('Your vault is already set up', { reason: 'already_set_up' });
    const credential = credentialOf(input);
    const passkey = credential ? await verifiedPasskey(ctx, web, me, credential, challenge) : null;
    const prf = passkey ? prfOutputOf(input.prf_output) : null;
    if (passkey && !passkey.prfCapable) throw businessError('This passkey cannot unlock a vault (no PRF support)', { reason: 'prf_unsupported' });
    const now = clock.now();
    const keys = generateKeypair();
    const vault = await createVault(db, me.usr_user_id, keys.publicKey, now);
    if (!vault) throw businessError('Your vault is already set up', { reason: 'already_set_up' });
    const codes = await insertRecoveryCodes(db, vault, vault.generation, keys.secretKey, now);
    if (input.passphrase) await insertPassphraseWrap(db, vault, vault.generation, keys.secretKey, input.passphrase, now);
    if (passkey && prf) await insertPasskeyWrap(db, vault, vault.generation, keys.secretKey, passkey.id, prf, now);
    await web.vault.openWith(db, vault, keys.secretKey);
    const status = await vaultStatus(db, me.usr_user_id, { unlocked: true, times: await web.vault.times(db, me.usr_user_id) });
    return {
      data: { ...status, recovery_codes: codes },
      message: 'Your vault is set up. Store the recovery codes now: they are not shown again.',
      sealedFor: [me.usr_user_id],
    };
  },
});
