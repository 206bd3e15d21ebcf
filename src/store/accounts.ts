import type { Kysely } from 'kysely';
import type { DB } from '../db/types.js';
import { randomUUID } from 'node:crypto';

/**
 * The user's store account token: a random UUID native apps pass to the app stores as appAccountToken
 * (iOS) and obfuscatedExternalAccountId (Android), so store notifications name our user without
 * carrying the user id. Created on first use; stable afterwards.
 */
export async function storeAccountToken(db: Kysely<DB>, userId: number): Promise<string> {
  await db
    .insertInto('sat_store_account_tokens')
    .values({ sat_usr_user_id: userId, sat_token: randomUUID() })
    .onConflict((oc) => oc.column('sat_usr_user_id').doNothing())
    .execute();
  const row = await db.selectFrom('sat_store_account_tokens').select('sat_token').where('sat_usr_user_id', '=', userId).executeTakeFirstOrThrow();
  return row.sat_token;
}

/** The user a store account token names, or null. Tokens compare case-insensitively (UUIDs). */
export async function userForAccountToken(db: Kysely<DB>, token: string): Promise<number | null> {
  const row = await db.selectFrom('sat_store_account_tokens').select('sat_usr_user_id').where('sat_token', '=', token.toLowerCase()).executeTakeFirst();
  return row ? Number(row.sat_usr_user_id) : null;
}
