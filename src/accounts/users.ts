import { sql, type Kysely } from 'kysely';
import type { DB } from '../db/types.js';
import { inTransaction } from '../tiers/transaction.js';
import { recordMemberCreated } from './member-events.js';
import { MIN_PASSWORD_LENGTH, hashSecret } from './passwords.js';

export class UserInputError extends Error {
  constructor(readonly field: string, message: string) {
    super(message);
  }
}

// Deliberately plain: one @, no spaces, a dot in the domain. Deliverability is the mailer's problem.
const EMAIL_RE = /^[^\s@]+@[^\s@]+\.[^\s@]+$/;

export function isValidEmail(email: string): boolean {
  return email.length <= 64 && EMAIL_RE.test(email);
}

export interface NewUser {
  email: string;
  password: string;
  permission?: number;
  firstName?: string;
  lastName?: string | null;
  now: Date;
}

/** Creates a user with an argon2id password hash; refuses bad emails, short passwords and taken addresses. */
export async function createUser(db: Kysely<DB>, input: NewUser): Promise<number> {
  const email = input.email.trim();
  if (!isValidEmail(email)) throw new UserInputError('email', `'${input.email}' is not a valid email address`);
  if (input.password.length < MIN_PASSWORD_LENGTH) {
    throw new UserInputError('password', `password must be at least ${MIN_PASSWORD_LENGTH} characters`);
  }
  const permission = input.permission ?? 0;
  if (!Number.isInteger(permission) || permission < 0 || permission > 10) {
    throw new UserInputError('permission', 'permission must be an integer from 0 to 10');
  }
  const firstName = (input.firstName ?? email.split('@')[0] ?? 'User').slice(0, 32);
  if (await findUserIdByEmail(db, email)) throw new UserInputError('email', `a user with email ${email} already exists`);
  const hash = await hashSecret(input.password);
  // member.created is written with the row, in the caller's transaction (or one of its own).
  return inTransaction(db, async (trx) => {
    const row = await trx
      .insertInto('usr_users')
      .values({
        usr_email: email,
        usr_first_name: firstName,
        usr_last_name: input.lastName ?? null,
        usr_password: hash,
        usr_permission: permission,
        usr_is_activated: true,
        usr_create_time: input.now,
        usr_update_time: input.now,
      })
      .returning('usr_user_id')
      .executeTakeFirstOrThrow();
    await recordMemberCreated(trx, { now: () => input.now, nowMs: () => input.now.getTime() }, row.usr_user_id);
    return row.usr_user_id;
  });
}

/** A user made by an import: no password (the member signs in through a password reset). */
export interface ImportedUser {
  email: string;
  firstName: string | null;
  lastName: string | null;
  createTime: Date | null;
  contactPreferences: string | null;
  stripeCustomerId: string | null;
}

/**
 * The bulk twin of createUser, for an import's batch: every user in one statement, none with a password,
 * all with permission 0. The caller has checked the addresses (valid, free) inside the same transaction;
 * a taken one fails the statement on the unique index. Returns the new ids by lower-cased address.
 */
export async function insertImportedUsers(db: Kysely<DB>, users: ImportedUser[], now: Date): Promise<Map<string, number>> {
  const ids = new Map<string, number>();
  if (users.length === 0) return ids;
  const rows = await db
    .insertInto('usr_users')
    .values(
      users.map((u) => ({
        usr_email: u.email.trim(),
        usr_first_name: (u.firstName ?? u.email.trim().split('@')[0] ?? 'User').slice(0, 32),
        usr_last_name: u.lastName,
        usr_password: null,
        usr_permission: 0,
        usr_is_activated: true,
        usr_create_time: u.createTime ?? now,
        usr_signup_date: u.createTime ?? now,
        usr_contact_preferences: u.contactPreferences,
        usr_stripe_customer_id: u.stripeCustomerId,
        usr_update_time: now,
      })),
    )
    .returning(['usr_user_id', 'usr_email'])
    .execute();
  for (const r of rows) ids.set(r.usr_email.toLowerCase(), Number(r.usr_user_id));
  // member.created for each, as createUser writes it (in the importing batch's transaction).
  const clock = { now: () => now, nowMs: () => now.getTime() };
  for (const r of rows) await recordMemberCreated(db, clock, Number(r.usr_user_id));
  return ids;
}

export async function findUserIdByEmail(db: Kysely<DB>, email: string): Promise<number | undefined> {
  const row = await db
    .selectFrom('usr_users')
    .select('usr_user_id')
    .where(sql<string>`lower(usr_email)`, '=', email.trim().toLowerCase())
    .where('usr_delete_time', 'is', null)
    .executeTakeFirst();
  return row?.usr_user_id;
}

export function displayName(u: { usr_nickname: string | null; usr_first_name: string; usr_last_name: string | null }): string {
  if (u.usr_nickname && u.usr_nickname.trim() !== '') return u.usr_nickname.trim();
  return [u.usr_first_name, u.usr_last_name ?? ''].join(' ').trim();
}
