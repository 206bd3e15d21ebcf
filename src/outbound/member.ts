import type { Kysely } from 'kysely';
import type { DB } from '../db/types.js';

/** Who an event is about, as every receiver needs it: the member's id and email address. */
export interface MemberSubject {
  user_id: number;
  email: string | null;
}

/** The member an event concerns, read in the change's transaction (null email: no such user any more). */
export async function memberSubject(db: Kysely<DB>, userId: number): Promise<MemberSubject> {
  const row = await db.selectFrom('usr_users').select('usr_email').where('usr_user_id', '=', userId).executeTakeFirst();
  return { user_id: userId, email: row?.usr_email ?? null };
}
