import type { Kysely, Selectable } from 'kysely';
import type { DB, VaultUnlockerType } from '../../db/types.js';
import {
  generateRecoveryCodes,
  kekFromPassphrase,
  kekFromPrf,
  kekFromRecoveryCode,
  randomSalt,
  unwrapSecret,
  wrapSecret,
} from './crypto.js';

/** A user's vault row. */
export interface Vault {
  id: number;
  userId: number;
  publicKey: Buffer;
  generation: number;
  windowEpoch: number;
}

export interface Wrap {
  id: number;
  type: VaultUnlockerType;
  wrapped: string;
  salt: Buffer;
  generation: number;
  passkeyId: number | null;
  usedTime: Date | null;
  createTime: Date;
}

type VaultRow = Selectable<DB['uev_user_encryption_vaults']>;

function vaultOfRow(row: VaultRow): Vault {
  return {
    id: row.uev_user_encryption_vault_id,
    userId: row.uev_usr_user_id,
    publicKey: Buffer.from(row.uev_public_key, 'base64url'),
    generation: row.uev_key_generation,
    windowEpoch: row.uev_window_epoch,
  };
}

/** The user's vault as last committed (no lock: never seal to this key, see lockVault). */
export async function vaultOf(db: Kysely<DB>, userId: number): Promise<Vault | null> {
  const row = await db.selectFrom('uev_user_encryption_vaults').selectAll().where('uev_usr_user_id', '=', userId).executeTakeFirst();
  return row ? vaultOfRow(row) : null;
}

/**
 * The vault row locked until the caller's transaction ends (DESIGN 10, rotation): a rotation takes it
 * exclusively (`rotate`: FOR UPDATE) and every writer of content sealed to the vault key takes it shared
 * (`seal`: FOR SHARE) in the transaction that writes the sealed row, before that transaction touches any
 * row a rotation re-seals, and seals to the key read here. So a rotation waits for every sealing writer
 * that read the old key to commit (and then re-seals what they wrote), a writer that comes during a
 * rotation waits for it and seals to the new key, and two rotations of one vault run one after the other.
 * `try-seal` does not wait: null when a rotation (or another update of the row) holds it now.
 */
export async function lockVault(db: Kysely<DB>, userId: number, mode: 'rotate' | 'seal' | 'try-seal'): Promise<Vault | null> {
  if (!db.isTransaction) throw new Error('lockVault needs the transaction that writes the sealed rows');
  const q = db.selectFrom('uev_user_encryption_vaults').selectAll().where('uev_usr_user_id', '=', userId);
  const row = await (mode === 'rotate' ? q.forUpdate() : mode === 'seal' ? q.forShare() : q.forShare().skipLocked()).executeTakeFirst();
  return row ? vaultOfRow(row) : null;
}

/** Creates the user's vault; null when one exists already (a concurrent setup won the unique key). */
export async function createVault(db: Kysely<DB>, userId: number, publicKey: Buffer, now: Date): Promise<Vault | null> {
  const row = await db
    .insertInto('uev_user_encryption_vaults')
    .values({ uev_usr_user_id: userId, uev_public_key: publicKey.toString('base64url'), uev_create_time: now })
    .onConflict((oc) => oc.column('uev_usr_user_id').doNothing())
    .returningAll()
    .executeTakeFirst();
  if (!row) return null;
  return { id: row.uev_user_encryption_vault_id, userId, publicKey, generation: row.uev_key_generation, windowEpoch: row.uev_window_epoch };
}

/** Live wraps of a vault (any generation unless given), oldest first. */
export async function liveWraps(db: Kysely<DB>, vaultId: number, opts: { type?: VaultUnlockerType; generation?: number } = {}): Promise<Wrap[]> {
  let q = db
    .selectFrom('uew_user_encryption_wrappings')
    .selectAll()
    .where('uew_uev_user_encryption_vault_id', '=', vaultId)
    .where('uew_delete_time', 'is', null);
  if (opts.type) q = q.where('uew_type', '=', opts.type);
  if (opts.generation !== undefined) q = q.where('uew_generation', '=', opts.generation);
  const rows = await q.orderBy('uew_user_encryption_wrapping_id').execute();
  return rows.map((r) => ({
    id: r.uew_user_encryption_wrapping_id,
    type: r.uew_type,
    wrapped: r.uew_wrapped_key,
    salt: Buffer.from(r.uew_salt, 'base64url'),
    generation: r.uew_generation,
    passkeyId: r.uew_pky_passkey_id,
    usedTime: r.uew_used_time,
    createTime: r.uew_create_time,
  }));
}

/**
 * Writes one wrap: the row first (its id is the associated data), then the wrapped key, in the caller's
 * transaction. The key-encryption key is derived from the unlocker's secret and the row's own salt.
 */
export async function insertWrap(
  db: Kysely<DB>,
  input: { vaultId: number; type: VaultUnlockerType; generation: number; secretKey: Buffer; kek: (salt: Buffer) => Buffer | Promise<Buffer>; passkeyId?: number | null; now: Date },
): Promise<number> {
  const salt = randomSalt();
  const row = await db
    .insertInto('uew_user_encryption_wrappings')
    .values({
      uew_uev_user_encryption_vault_id: input.vaultId,
      uew_type: input.type,
      uew_wrapped_key: '',
      uew_salt: salt.toString('base64url'),
      uew_generation: input.generation,
      uew_pky_passkey_id: input.passkeyId ?? null,
      uew_create_time: input.now,
    })
    .returning('uew_user_encryption_wrapping_id')
    .executeTakeFirstOrThrow();
  const id = row.uew_user_encryption_wrapping_id;
  await db
    .updateTable('uew_user_encryption_wrappings')
    .set({ uew_wrapped_key: wrapSecret(await input.kek(salt), input.secretKey, id) })
    .where('uew_user_encryption_wrapping_id', '=', id)
    .execute();
  return id;
}

/** Ten fresh recovery codes wrapping this secret; returns the codes (shown once, never stored). */
export async function insertRecoveryCodes(db: Kysely<DB>, vault: Vault, generation: number, secretKey: Buffer, now: Date): Promise<string[]> {
  const codes = generateRecoveryCodes();
  for (const code of codes) {
    await insertWrap(db, { vaultId: vault.id, type: 'recovery', generation, secretKey, kek: (salt) => kekFromRecoveryCode(code, salt), now });
  }
  return codes;
}

export function insertPasskeyWrap(db: Kysely<DB>, vault: Vault, generation: number, secretKey: Buffer, passkeyId: number, prfOutput: Buffer, now: Date) {
  return insertWrap(db, { vaultId: vault.id, type: 'passkey', generation, secretKey, passkeyId, kek: (salt) => kekFromPrf(prfOutput, salt), now });
}

export function insertPassphraseWrap(db: Kysely<DB>, vault: Vault, generation: number, secretKey: Buffer, passphrase: string, now: Date) {
  return insertWrap(db, { vaultId: vault.id, type: 'passphrase', generation, secretKey, kek: (salt) => kekFromPassphrase(passphrase, salt), now });
}

/**
 * What a retired or spent wrap keeps: its row (type, generation, times: a spent code stays known as spent),
 * never its wrapped key or salt, so no later copy of the database opens the vault with the old unlocker.
 */
const DESTROYED = { uew_wrapped_key: '', uew_salt: '' } as const;

/** Retires wraps: marked deleted and their wrapped copies of the vault key destroyed. */
export async function retireWraps(db: Kysely<DB>, ids: number[], now: Date): Promise<void> {
  if (ids.length === 0) return;
  await db
    .updateTable('uew_user_encryption_wrappings')
    .set({ uew_delete_time: now, ...DESTROYED })
    .where('uew_user_encryption_wrapping_id', 'in', ids)
    .where('uew_delete_time', 'is', null)
    .execute();
}

/** A revoked passkey's wraps (any generation) are retired and destroyed with it. */
export async function retirePasskeyWraps(db: Kysely<DB>, passkeyId: number, now: Date): Promise<void> {
  await db.updateTable('uew_user_encryption_wrappings').set({ uew_delete_time: now, ...DESTROYED }).where('uew_pky_passkey_id', '=', passkeyId).where('uew_delete_time', 'is', null).execute();
}

/** Opens the first of these wraps that the key-encryption key opens (its id too), or null. */
export async function openAnyWrap(wraps: Wrap[], kek: (salt: Buffer) => Buffer | Promise<Buffer>): Promise<{ wrap: Wrap; secretKey: Buffer } | null> {
  for (const wrap of wraps) {
    const secretKey = unwrapSecret(await kek(wrap.salt), wrap.wrapped, wrap.id);
    if (secretKey) return { wrap, secretKey };
  }
  return null;
}

/**
 * Spends a recovery code: one statement that only succeeds once, so two concurrent unlocks cannot both use
 * it; its wrapped key is destroyed in the same statement.
 */
export async function markCodeUsed(db: Kysely<DB>, wrapId: number, now: Date): Promise<boolean> {
  const res = await db
    .updateTable('uew_user_encryption_wrappings')
    .set({ uew_used_time: now, ...DESTROYED })
    .where('uew_user_encryption_wrapping_id', '=', wrapId)
    .where('uew_used_time', 'is', null)
    .where('uew_delete_time', 'is', null)
    .executeTakeFirst();
  return Number(res.numUpdatedRows) === 1;
}

/** Closes every open window of the user (a password change): windows carry the epoch they were opened in. */
export async function bumpWindowEpoch(db: Kysely<DB>, userId: number): Promise<void> {
  await db
    .updateTable('uev_user_encryption_vaults')
    .set((eb) => ({ uev_window_epoch: eb('uev_window_epoch', '+', 1) }))
    .where('uev_usr_user_id', '=', userId)
    .execute();
}
