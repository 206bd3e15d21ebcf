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

function vetoRegistry() {
  const vetoes: PasskeyVeto[] = [];
  return {
    /** Registers a veto; the returned function removes it again. */
    register(veto: PasskeyVeto): () => void {
      vetoes.push(veto);
      return () => {
        const i = vetoes.indexOf(veto);
        if (i >= 0) vetoes.splice(i, 1);
      };
    },
    /** The first registered veto's refusal, or null when every veto allows. */
    async first(db: Kysely<DB>, input: PasskeyVetoInput): Promise<PasskeyVetoRefusal | null> {
      for (const veto of vetoes) {
        const refusal = await veto(db, input);
        if (refusal) return refusal;
      }
      return null;
    },
  };
}

/**
 * Consumers that depend on a user's passkeys may refuse a revocation (the vault's unlocker floor:
 * `unlocker_floor`). Vetoes run before the row changes.
 */
const revokeVetoes = vetoRegistry();
export const registerPasskeyRevokeVeto = revokeVetoes.register;
export const firstRevokeVeto = revokeVetoes.first;

/**
 * Consumers may refuse a passkey as the only factor of a sign-in (an account with a sealed vault still
 * needs its password: `password_required`). Asked after the assertion verified, before the session is
 * signed in; step-up is not affected.
 */
const signInVetoes = vetoRegistry();
export const registerPasskeySignInVeto = signInVetoes.register;
export const firstSignInVeto = signInVetoes.first;
