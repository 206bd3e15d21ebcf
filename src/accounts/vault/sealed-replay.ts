import type { Kysely } from 'kysely';
import type { DB } from '../../db/types.js';
import { actionError } from '../../http/errors.js';
import { aeadOpen, aeadSeal, openSealedBox, randomKey, sealToPublicKey } from './crypto.js';
import { vaultOf } from './vaults.js';
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

export async function sealedCopy(db: Kysely<DB>, owners: number[], body: string, ad: string): Promise<string> {
  const unique = [...new Set(owners)];
  const vault = unique.length === 1 ? await vaultOf(db, unique[0]!) : null;
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
