import type { Kysely } from 'kysely';
import type { DB } from '../../db/types.js';

/** Which passkey and whose: what a veto is asked about. */
export interface PasskeyVetoInput {
  userId: number;
  passkeyId: number;
}

/** A refusal: its reason code is answered as 422 ActionError with data.reason, its message as the error. */
export interface PasskeyVetoRefusal {
  reason: string;
  message: string;
}

/** A consumer's veto: a refusal, or null to allow. */
export type PasskeyVeto = (db: Kysely<DB>, input: PasskeyVetoInput) => Promise<PasskeyVetoRefusal | null>;

/**
 * The vetoes consumers hold over passkeys, composed once by the roof (the vault's: the unlocker floor on
 * revocation, the password on sign-in). Vetoes run in list order before anything changes.
 */
export interface PasskeyVetoes {
  /** May refuse a revocation (the vault's unlocker floor: `unlocker_floor`). */
  revoke: PasskeyVeto[];
  /**
   * May refuse a passkey as the only factor of a sign-in (an account with a sealed vault still needs its
   * password: `password_required`). Asked after the assertion verified, before the session is signed in;
   * step-up is not affected.
   */
  signIn: PasskeyVeto[];
}

/** The first veto's refusal, or null when every veto allows. */
export async function firstRefusal(vetoes: readonly PasskeyVeto[], db: Kysely<DB>, input: PasskeyVetoInput): Promise<PasskeyVetoRefusal | null> {
  for (const veto of vetoes) {
    const refusal = await veto(db, input);
    if (refusal) return refusal;
  }
  return null;
}
