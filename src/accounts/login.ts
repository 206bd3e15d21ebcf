import { sql, type Kysely } from 'kysely';
import type { DB } from '../db/types.js';
import type { PrincipalUser } from './auth/principal.js';
import { burnVerification, verifySecret } from './passwords.js';

/**
 * Checks an email and password. Unknown email, deleted user, disabled user and wrong password all give
 * null after the same work (one full slow-hash verification), so neither the answer nor its timing tells
 * them apart.
 */
export async function verifyLogin(db: Kysely<DB>, email: string, password: string): Promise<PrincipalUser | null> {
  const user = await db
    .selectFrom('usr_users')
    .select(['usr_user_id', 'usr_email', 'usr_first_name', 'usr_last_name', 'usr_nickname', 'usr_permission', 'usr_password', 'usr_is_disabled'])
    .where(sql<string>`lower(usr_email)`, '=', email.trim().toLowerCase())
    .where('usr_delete_time', 'is', null)
    .executeTakeFirst();
  let ok = false;
  if (user?.usr_password) ok = await verifySecret(user.usr_password, password);
  else await burnVerification(password);
  if (!user || !ok || user.usr_is_disabled) return null;
  const { usr_password: _password, usr_is_disabled: _disabled, ...summary } = user;
  return summary;
}
