import type { Kysely } from 'kysely';
import type { DB } from '../../db/types.js';
import { generateKeypair, publicKeyOf } from './crypto.js';
import { resealStoredAnswers } from './sealed-replay.js';
import { insertPassphraseWrap, insertPasskeyWrap, insertRecoveryCodes, liveWraps, lockVault, retireWraps, type Vault } from './vaults.js';

/**
 * A consumer's content keys sealed to the vault's public key are re-sealed to the new one during a
 * rotation (open with the old secret, seal to the new public key), in the rotation's transaction.
 */
export type ContentResealer = (db: Kysely<DB>, input: { userId: number; oldSecretKey: Buffer; newPublicKey: Buffer }) => Promise<void>;

/**
 * Rotates a vault (DESIGN 10), in this order so that an interrupted rotation leaves the old generation
 * whole and a re-run completes: (1) wraps of an earlier interrupted attempt are retired, (2) the new
 * generation is written (keypair, this passkey's wrap, the passphrase if given, 10 new codes), (3) content
 * keys are re-sealed, (4) the vault switches to the new public key and generation, (5) the old wraps are
 * retired last (their wrapped keys destroyed).
 *
 * It holds the vault row exclusively (lockVault 'rotate') until the caller's transaction commits, so it
 * waits for every sealing writer that read the old key and re-seals what they wrote, and a writer coming
 * meanwhile seals to the new key. `vault` and `oldSecretKey` must be the generation current under that
 * lock: a rotation that lost a race to another one is refused here, never run with a stale key.
 * `resealers` are the consumers' re-sealers (composed by the roof: Drive's, then each plugin's), run in
 * that order after the stored answers.
 */
export async function rotateVault(
  db: Kysely<DB>,
  vault: Vault,
  oldSecretKey: Buffer,
  with_: { passkey?: { id: number; prf: Buffer }; passphrase?: string },
  now: Date,
  resealers: readonly ContentResealer[],
): Promise<{ vault: Vault; secretKey: Buffer; codes: string[] }> {
  const current = await lockVault(db, vault.userId, 'rotate');
  if (!current || current.generation !== vault.generation || !current.publicKey.equals(vault.publicKey) || !publicKeyOf(oldSecretKey).equals(current.publicKey)) {
    throw new VaultRotatedError();
  }
  const generation = vault.generation + 1;
  const leftovers = (await liveWraps(db, vault.id)).filter((w) => w.generation > vault.generation);
  await retireWraps(db, leftovers.map((w) => w.id), now);
  const keys = generateKeypair();
  if (with_.passkey) await insertPasskeyWrap(db, vault, generation, keys.secretKey, with_.passkey.id, with_.passkey.prf, now);
  if (with_.passphrase) await insertPassphraseWrap(db, vault, generation, keys.secretKey, with_.passphrase, now);
  const codes = await insertRecoveryCodes(db, vault, generation, keys.secretKey, now);
  const input = { userId: vault.userId, oldSecretKey, newPublicKey: keys.publicKey };
  await resealStoredAnswers(db, input);
  for (const reseal of resealers) await reseal(db, input);
  await db
    .updateTable('uev_user_encryption_vaults')
    .set({ uev_public_key: keys.publicKey.toString('base64url'), uev_key_generation: generation, uev_update_time: now })
    .where('uev_user_encryption_vault_id', '=', vault.id)
    .where('uev_key_generation', '=', vault.generation)
    .execute();
  const old = (await liveWraps(db, vault.id)).filter((w) => w.generation < generation);
  await retireWraps(db, old.map((w) => w.id), now);
  return { vault: { ...vault, publicKey: keys.publicKey, generation }, secretKey: keys.secretKey, codes };
}

/** The vault was rotated (by another session) since the caller read its key: nothing was changed. */
export class VaultRotatedError extends Error {
  constructor() {
    super('the vault was rotated since its key was read');
  }
}
