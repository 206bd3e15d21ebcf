import { rotateVault, VaultRotatedError } from '../../accounts/vault/rotation.js';
import { currentUnlockers, vaultStatus } from '../../accounts/vault/unlockers.js';
import { lockVault } from '../../accounts/vault/vaults.js';
import { businessError } from '../../http/errors.js';
import { defineAction } from '../define.js';
import {
  BROWSER_ONLY,
  OPTIONAL_CREDENTIAL_INPUT,
  PASSWORD_INPUT,
  PRF_OUTPUT_INPUT,
  credentialOf,
  prfOutputOf,
  requirePassword,
  takeCeremony,
  verifiedPasskey,
} from './shared.js';
import { PASSPHRASE_MIN } from './vault_setup_verify.js';

const rotatedMeanwhile = () =>
  businessError('Your vault key was rotated in another session meanwhile; unlock your vault with the new key to rotate again', { reason: 'vault_rotated' });

/**
 * Completes a rotation: proof by a passkey that unlocks the vault (with its PRF output, so the new
 * generation is wrapped under it) or, for a vault without passkey unlockers, the account password. A fresh
 * keypair, content keys re-sealed, 10 new recovery codes (shown once), the old unlockers retired; other
 * passkeys are added again with vault_add_passkey_*. This session's window moves to the new key.
 */
export default defineAction({
  name: 'vault_rotate_verify',
  description: 'Complete rotation: fresh keypair, re-seal, recovery codes replaced',
  auth: BROWSER_ONLY,
  mutates: true,
  input: { ...OPTIONAL_CREDENTIAL_INPUT, ...PRF_OUTPUT_INPUT, ...PASSWORD_INPUT, passphrase: { type: 'password', min: PASSPHRASE_MIN, max_length: 1024 } },
  vault: 'set_up',
  async run(ctx) {
    const { input, db, user: me, web } = ctx;
    const challenge = await takeCeremony(ctx, web, me, 'vault_rotate');
    // One rotation of a vault at a time: the row is held from here to the commit, and the window is read
    // under it, so a rotation that waited for another one finds its window's key retired and is refused.
    const vault = (await lockVault(db, me.usr_user_id, 'rotate'))!;
    const open = await web.vault.unsealFor(db, me.usr_user_id);
    if (!open && web.vault.closedByRotation) throw rotatedMeanwhile();
    if (!open) throw businessError('Unlock your vault first', { reason: 'vault_locked' });
    let passkey: { id: number; prf: Buffer } | undefined;
    const credential = credentialOf(input);
    if (credential) {
      const prf = prfOutputOf(input.prf_output);
      const verified = await verifiedPasskey(ctx, web, me, credential, challenge);
      if (!(await currentUnlockers(db, vault)).passkeys.some((w) => w.passkeyId === verified.id)) {
        throw businessError('This passkey does not unlock your vault', { reason: 'not_an_unlocker' });
      }
      passkey = { id: verified.id, prf };
    } else {
      await requirePassword(ctx, me, input.password);
    }
    const rotated = await rotateVault(db, vault, open.secretKey, { ...(passkey ? { passkey } : {}), ...(input.passphrase ? { passphrase: input.passphrase } : {}) }, ctx.clock.now(), ctx.vaultParts.resealers).catch(
      (e: unknown) => {
        throw e instanceof VaultRotatedError ? rotatedMeanwhile() : e;
      },
    );
    await web.vault.openWith(db, rotated.vault, rotated.secretKey);
    const status = await vaultStatus(db, me.usr_user_id, { unlocked: true, times: await web.vault.times(db, me.usr_user_id) });
    return {
      data: { ...status, recovery_codes: rotated.codes },
      message: 'Your vault key was rotated. Store the new recovery codes now; the old ones no longer work.',
      sealedFor: [me.usr_user_id],
    };
  },
});
