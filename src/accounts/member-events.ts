import type { Kysely } from 'kysely';
import type { DB } from '../db/types.js';
import type { Clock } from '../lib/clock.js';
import { recordEvent } from '../outbound/events.js';

/** The member fields receivers get (and, when they change, `previous` of): user column → payload key. */
const MEMBER_FIELDS = {
  usr_email: 'email',
  usr_first_name: 'first_name',
  usr_last_name: 'last_name',
  usr_nickname: 'nickname',
  usr_permission: 'permission',
  usr_is_disabled: 'is_disabled',
  usr_contact_preferences: 'contact_preferences',
} as const;

type MemberColumn = keyof typeof MEMBER_FIELDS;
export const MEMBER_COLUMNS = Object.keys(MEMBER_FIELDS) as MemberColumn[];
type UserRow = Record<string, unknown>;

const value = (col: MemberColumn, v: unknown): unknown => {
  if (v === undefined || v === null) return col === 'usr_is_disabled' ? false : null;
  if (col === 'usr_permission') return Number(v);
  if (col === 'usr_is_disabled') return v === true || v === 'true' || v === 1 || v === '1';
  return String(v);
};

function memberData(userId: number, row: UserRow): Record<string, unknown> {
  const data: Record<string, unknown> = { user_id: userId };
  for (const col of MEMBER_COLUMNS) data[MEMBER_FIELDS[col]] = value(col, row[col]);
  return data;
}

async function readMember(trx: Kysely<DB>, userId: number): Promise<UserRow | undefined> {
  return trx.selectFrom('usr_users').select(MEMBER_COLUMNS).where('usr_user_id', '=', userId).executeTakeFirst();
}

/** member.created, from the user's row as written (in the creating transaction). */
export async function recordMemberCreated(trx: Kysely<DB>, clock: Clock, userId: number): Promise<void> {
  const row = await readMember(trx, userId);
  if (!row) return;
  await recordEvent(trx, clock, 'member.created', memberData(userId, row), { userId });
}

/**
 * member.updated when a member field changed: the fields as they are now, the keys that changed, and
 * `previous` holding their old values. `before` is the row before the change (at least MEMBER_COLUMNS);
 * the row after is read in the transaction, unless the caller has it as its update returned it (`written`,
 * at least MEMBER_COLUMNS). Nothing is written when no member field changed.
 */
export async function recordMemberUpdated(trx: Kysely<DB>, clock: Clock, userId: number, before: UserRow, written?: UserRow): Promise<void> {
  const after = written ?? (await readMember(trx, userId));
  if (!after) return;
  const previous: Record<string, unknown> = {};
  for (const col of MEMBER_COLUMNS) {
    const old = value(col, before[col]);
    if (old !== value(col, after[col])) previous[MEMBER_FIELDS[col]] = old;
  }
  const changed = Object.keys(previous);
  if (changed.length === 0) return;
  await recordEvent(trx, clock, 'member.updated', { ...memberData(userId, after), changed, previous }, { userId });
}

/** The member columns of a user as they are now: what recordMemberUpdated compares with. */
export async function memberBefore(trx: Kysely<DB>, userId: number): Promise<UserRow> {
  return (await readMember(trx, userId)) ?? {};
}

/** member.deleted, from the row as it was. */
export async function recordMemberDeleted(trx: Kysely<DB>, clock: Clock, userId: number, row: UserRow): Promise<void> {
  await recordEvent(trx, clock, 'member.deleted', memberData(userId, row), { userId });
}
