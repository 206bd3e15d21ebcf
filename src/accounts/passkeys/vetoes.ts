import type { Kysely } from 'kysely';
import type { DB } from '../../db/types.js';

/**
 * A consumer that depends on a user's passkeys (the vault's unlocker floor) may refuse a revocation: it
 * returns a reason code (answered as 422 ActionError with data.reason) or null to allow it. Vetoes run in
 * the revoking transaction, before the row changes.
 */
export type PasskeyRevokeVeto = (db: Kysely<DB>, input: { userId: number; passkeyId: number }) => Promise<{ reason: string; message: string } | null>;

const vetoes: PasskeyRevokeVeto[] = [];

export function registerPasskeyRevokeVeto(veto: PasskeyRevokeVeto): () => void {
  vetoes.push(veto);
  return () => {
    const i = vetoes.indexOf(veto);
    if (i >= 0) vetoes.splice(i, 1);
  };
}

export async function firstRevokeVeto(db: Kysely<DB>, input: { userId: number; passkeyId: number }): Promise<{ reason: string; message: string } | null> {
  for (const veto of vetoes) {
    const refusal = await veto(db, input);
    if (refusal) return refusal;
  }
  return null;
}
