import { sql, type Kysely } from 'kysely';
import type { DB } from '../db/types.js';
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
  /** null: no password (an imported member signs in through a password reset, or a passkey later). */
  password: string | null;
  permission?: number;
  firstName?: string;
  lastName?: string | null;
  now: Date;
  /** When the account was made, when older than now (an imported member's sign-up time). */
  createTime?: Date;
  /** usr_contact_preferences, comma-separated channels. */
  contactPreferences?: string | null;
  stripeCustomerId?: string | null;
}

/**
 * Creates a user with an argon2id password hash (or none); refuses bad emails, short passwords and taken
 * addresses.
 */
export async function createUser(db: Kysely<DB>, input: NewUser): Promise<number> {
  const email = input.email.trim();
  if (!isValidEmail(email)) throw new UserInputError('email', `'${input.email}' is not a valid email address`);
  if (input.password !== null && input.password.length < MIN_PASSWORD_LENGTH) {
    throw new UserInputError('password', `password must be at least ${MIN_PASSWORD_LENGTH} characters`);
  }
  const permission = input.permission ?? 0;
  if (!Number.isInteger(permission) || permission < 0 || permission > 10) {
    throw new UserInputError('permission', 'permission must be an integer from 0 to 10');
  }
  const firstName = (input.firstName ?? email.split('@')[0] ?? 'User').slice(0, 32);
  if (await findUserIdByEmail(db, email)) throw new UserInputError('email', `a user with email ${email} already exists`);
  const row = await db
    .insertInto('usr_users')
    .values({
      usr_email: email,
      usr_first_name: firstName,
      usr_last_name: input.lastName ?? null,
      usr_password: input.password === null ? null : await hashSecret(input.password),
      usr_permission: permission,
      usr_is_activated: true,
      ...(input.createTime ? { usr_create_time: input.createTime, usr_signup_date: input.createTime } : { usr_create_time: input.now }),
      ...(input.contactPreferences !== undefined ? { usr_contact_preferences: input.contactPreferences } : {}),
      ...(input.stripeCustomerId !== undefined ? { usr_stripe_customer_id: input.stripeCustomerId } : {}),
      usr_update_time: input.now,
    })
    .returning('usr_user_id')
    .executeTakeFirstOrThrow();
  return row.usr_user_id;
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
