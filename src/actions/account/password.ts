import type { Kysely } from 'kysely';
import { revokeSessionKeysOf } from '../../accounts/api-keys.js';
import { MIN_PASSWORD_LENGTH, hashSecret } from '../../accounts/passwords.js';
import type { DB } from '../../db/types.js';
import { bumpWindowEpoch } from '../../accounts/vault/vaults.js';
import type { InputField } from '../input.js';

/** The input field every action that takes a new password declares. */
export const newPasswordField = { type: 'password', required: true, min: MIN_PASSWORD_LENGTH, max_length: 255 } as const satisfies InputField;

/**
 * Sets a user's password and clears a forced change. A password change always revokes every session key
 * of the owner (machine keys are untouched) and closes every open vault window; returns how many were revoked.
 */
export async function changePassword(db: Kysely<DB>, userId: number, password: string, now: Date): Promise<number> {
  await db
    .updateTable('usr_users')
    .set({ usr_password: await hashSecret(password), usr_force_password_change: false, usr_update_time: now })
    .where('usr_user_id', '=', userId)
    .execute();
  // Every open vault window of the user closes (DESIGN 10).
  await bumpWindowEpoch(db, userId);
  return revokeSessionKeysOf(db, userId, now);
}
