import type { Kysely } from 'kysely';
import type { DB } from '../../db/types.js';
import { actionError } from '../../http/errors.js';
import { aeadOpen, aeadSeal, openSealedBox, randomKey, sealToPublicKey } from './crypto.js';
import { lockVault } from './vaults.js';
import type { VaultWindow } from './window.js';

// An Idempotency-Key copy of an answer that holds sealed content (DESIGN 10) is stored sealed: a random
// key sealed to the owner's vault public key, the body AES-256-GCM under it, both bound to the key record.
// A copy that involves more than one owner is kept only as a marker: it can never be opened.

const PREFIX = 'sealed:v1:';

interface SealedCopy {
  owner: number | null;
  key?: string;
  body?: string;
}

export function isSealedCopy(stored: string): boolean {
  return stored.startsWith(PREFIX);
}

/** What a stored copy is bound to: its idempotency record (scope and key hash). */
export const sealedCopyAd = (record: { scope: string; keyHash: string }) => `aik:${record.scope}:${record.keyHash}`;

/**
 * The copy to store, in the transaction that stores it: sealed to the vault key current under a shared
 * lock of the vault row (see lockVault), so a rotation either waits for it and re-seals it, or has already
 * switched the key. While a rotation holds the row the copy is kept as a marker only (it answers 409 on a
 * replay) rather than waiting: the action's transaction may hold rows the rotation is waiting for.
 */
export async function sealedCopy(db: Kysely<DB>, owners: number[], body: string, ad: string): Promise<string> {
  const unique = [...new Set(owners)];
  const vault = unique.length === 1 ? await lockVault(db, unique[0]!, 'try-seal') : null;
  if (!vault) return PREFIX + JSON.stringify({ owner: null } satisfies SealedCopy);
  const contentKey = randomKey();
  const copy: SealedCopy = {
    owner: vault.userId,
    key: sealToPublicKey(vault.publicKey, contentKey, `${ad}:key`),
    body: aeadSeal(contentKey, Buffer.from(body, 'utf8'), `${ad}:body`),
  };
  return PREFIX + JSON.stringify(copy);
}

/**
 * The stored answer of a sealed copy, opened through the caller's open window; otherwise 409 ActionError
 * sealed_replay_locked (the action is not run again).
 */
export async function openSealedCopy(db: Kysely<DB>, window: VaultWindow | null, userId: number | null, stored: string, ad: string): Promise<string> {
  const copy = JSON.parse(stored.slice(PREFIX.length)) as SealedCopy;
  const refuse = () =>
    actionError(409, 'The stored answer to this request is sealed and cannot be opened now; unlock your vault and retry. The action was not repeated.', {
      reason: 'sealed_replay_locked',
    });
  if (copy.owner === null || copy.owner !== userId || !window || !copy.key || !copy.body) throw refuse();
  const open = await window.unsealFor(db, userId);
  const contentKey = open ? openSealedBox(open.secretKey, copy.key, `${ad}:key`) : null;
  const body = contentKey ? aeadOpen(contentKey, copy.body, `${ad}:body`) : null;
  if (!body) throw refuse();
  return body.toString('utf8');
}

/**
 * A rotation's part: the stored copies of this owner's answers (Idempotency-Key records, kept 24 hours)
 * get their key re-sealed to the new public key, so a replay after the rotation still opens.
 */
export async function resealStoredAnswers(db: Kysely<DB>, input: { userId: number; oldSecretKey: Buffer; newPublicKey: Buffer }): Promise<void> {
  const rows = await db
    .selectFrom('aik_api_idempotency_keys')
    .select(['aik_api_idempotency_key_id', 'aik_scope', 'aik_key_hash', 'aik_body'])
    .where('aik_body', 'like', `${PREFIX}{"owner":${Math.trunc(input.userId)},%`)
    .execute();
  for (const r of rows) {
    const copy = JSON.parse(r.aik_body!.slice(PREFIX.length)) as SealedCopy;
    if (copy.owner !== input.userId || !copy.key) continue;
    const ad = `${sealedCopyAd({ scope: r.aik_scope, keyHash: r.aik_key_hash })}:key`;
    const contentKey = openSealedBox(input.oldSecretKey, copy.key, ad);
    if (!contentKey) continue;
    const resealed: SealedCopy = { ...copy, key: sealToPublicKey(input.newPublicKey, contentKey, ad) };
    await db
      .updateTable('aik_api_idempotency_keys')
      .set({ aik_body: PREFIX + JSON.stringify(resealed) })
      .where('aik_api_idempotency_key_id', '=', r.aik_api_idempotency_key_id)
      .execute();
  }
}
