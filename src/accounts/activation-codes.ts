import type { Kysely } from 'kysely';
import type { ActivationCodePurpose, DB } from '../db/types.js';
import { randomHex, safeEqual, sha256Hex } from '../lib/crypto.js';

// Single-use codes mailed to a member (password reset, first activation); only their SHA-256 is stored.
// The actions that redeem them and the website's reset page share these.

/** How long a code stays usable. */
export const CODE_LIFETIME_MS: Record<ActivationCodePurpose, number> = {
  password_reset: 60 * 60_000,
  activation: 7 * 24 * 3_600_000,
};

/** Issues a single-use code for a user; only its SHA-256 is stored. Returns the code to mail. */
export async function issueCode(db: Kysely<DB>, userId: number, purpose: ActivationCodePurpose, now: Date): Promise<string> {
  const code = randomHex(24);
  await db
    .insertInto('act_activation_codes')
    .values({
      act_usr_user_id: userId,
      act_purpose: purpose,
      act_code_hash: sha256Hex(code),
      act_expires_time: new Date(now.getTime() + CODE_LIFETIME_MS[purpose]),
      act_create_time: now,
    })
    .execute();
  return code;
}

/**
 * Uses a code up: returns its user when the code exists for this purpose, is unexpired and unused, and
 * marks it used in the same conditional update, so two concurrent uses cannot both succeed.
 */
export async function consumeCode(db: Kysely<DB>, code: string, purpose: ActivationCodePurpose, now: Date): Promise<number | null> {
  const hash = sha256Hex(code);
  const row = await db
    .selectFrom('act_activation_codes')
    .select(['act_activation_code_id', 'act_code_hash', 'act_usr_user_id'])
    .where('act_code_hash', '=', hash)
    .where('act_purpose', '=', purpose)
    .executeTakeFirst();
  if (!row || !safeEqual(row.act_code_hash, hash)) return null;
  const used = await db
    .updateTable('act_activation_codes')
    .set({ act_used_time: now })
    .where('act_activation_code_id', '=', row.act_activation_code_id)
    .where('act_used_time', 'is', null)
    .where('act_expires_time', '>', now)
    .returning('act_usr_user_id')
    .executeTakeFirst();
  return used?.act_usr_user_id ?? null;
}

/** Whether a code would be accepted now, without using it (the reset form checks before asking). */
export async function isCodeUsable(db: Kysely<DB>, code: string, purpose: ActivationCodePurpose, now: Date): Promise<boolean> {
  const row = await db
    .selectFrom('act_activation_codes')
    .select('act_activation_code_id')
    .where('act_code_hash', '=', sha256Hex(code))
    .where('act_purpose', '=', purpose)
    .where('act_used_time', 'is', null)
    .where('act_expires_time', '>', now)
    .executeTakeFirst();
  return row !== undefined;
}

/** A password reset makes every earlier outstanding reset code of the user useless. */
export async function retireCodes(db: Kysely<DB>, userId: number, purpose: ActivationCodePurpose, now: Date): Promise<void> {
  await db
    .updateTable('act_activation_codes')
    .set({ act_used_time: now })
    .where('act_usr_user_id', '=', userId)
    .where('act_purpose', '=', purpose)
    .where('act_used_time', 'is', null)
    .execute();
}
