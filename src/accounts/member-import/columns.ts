import { isValidEmail } from '../users.js';

/**
 * Ghost's member export columns, in its order (DESIGN 16): the reference for import and the exact
 * columns of export. Any CSV with at least `email` imports; other columns are reported and ignored.
 */
export const MEMBER_COLUMNS = ['id', 'email', 'name', 'note', 'subscribed_to_emails', 'complimentary_plan', 'stripe_customer_id', 'created_at', 'deleted_at', 'labels', 'tiers'] as const;
export type MemberColumn = (typeof MEMBER_COLUMNS)[number];

/** Known columns that have no place here: read past, named in the summary as not carried over. */
export const NOT_CARRIED: readonly MemberColumn[] = ['id', 'note', 'deleted_at', 'labels'];

/** Why a row is skipped: a closed set, each with the sentence shown beside it. */
export type RowErrorReason =
  | 'no_email'
  | 'malformed_email'
  | 'duplicate_email'
  | 'unknown_tier'
  | 'no_paid_tier'
  | 'malformed_value'
  | 'not_permitted'
  | 'card_processor_unreachable'
  | 'failed';

export interface RowError {
  reason: RowErrorReason;
  message: string;
}

/** Where each known column sits in the file's header (-1: absent), and the header's other columns. */
export interface HeaderMap {
  index: Record<MemberColumn, number>;
  unknown: string[];
}

export class HeaderError extends Error {}

/** Reads the header record; a file whose header names no `email` column is no member CSV. */
export function readHeader(fields: string[]): HeaderMap {
  const index = Object.fromEntries(MEMBER_COLUMNS.map((c) => [c, -1])) as Record<MemberColumn, number>;
  const unknown: string[] = [];
  fields.forEach((raw, i) => {
    const name = raw.trim().toLowerCase();
    if ((MEMBER_COLUMNS as readonly string[]).includes(name)) {
      // A repeated column: the first one counts.
      if (index[name as MemberColumn] === -1) index[name as MemberColumn] = i;
    } else if (name !== '') unknown.push(raw.trim());
  });
  if (index.email === -1) throw new HeaderError(`the first line names no 'email' column (it has: ${fields.slice(0, 12).map((f) => f.trim()).join(', ') || 'nothing'})`);
  return { index, unknown };
}

/** A row as it asks to be: null where the file says nothing (a column absent, or a blank cell). */
export interface MemberRow {
  line: number;
  email: string;
  firstName: string | null;
  lastName: string | null;
  subscribedToEmails: boolean | null;
  complimentary: boolean;
  stripeCustomerId: string | null;
  createdAt: Date | null;
  /** Tier names or display names, as written. */
  tiers: string[];
}

export type ParsedRow = { ok: true; row: MemberRow } | { ok: false; line: number; email: string; error: RowError };

const cell = (fields: string[], i: number): string => (i < 0 ? '' : (fields[i] ?? '').trim());

function bool(raw: string): boolean | null | 'bad' {
  const v = raw.toLowerCase();
  if (v === '') return null;
  if (v === 'true' || v === '1' || v === 'yes') return true;
  if (v === 'false' || v === '0' || v === 'no') return false;
  return 'bad';
}

const STRIPE_CUSTOMER = /^cus_[A-Za-z0-9]{1,28}$/;
const FIRST_NAME_MAX = 32;
const LAST_NAME_MAX = 32;

/** "Ada King Lovelace" → Ada / King Lovelace; each part cut to its column's length. */
export function splitName(name: string): { firstName: string; lastName: string | null } {
  const clean = name.replace(/\s+/g, ' ').trim();
  const space = clean.indexOf(' ');
  if (space < 0) return { firstName: clean.slice(0, FIRST_NAME_MAX), lastName: null };
  return { firstName: clean.slice(0, space).slice(0, FIRST_NAME_MAX), lastName: clean.slice(space + 1).slice(0, LAST_NAME_MAX) || null };
}

/** Splits a `tiers` cell: Ghost joins several tiers with commas. */
export function splitList(raw: string): string[] {
  return raw
    .split(',')
    .map((s) => s.trim())
    .filter((s) => s !== '');
}

/** One record read against the header: the row it asks for, or why it cannot be imported at all. */
export function parseRow(fields: string[], line: number, header: HeaderMap): ParsedRow {
  const { index } = header;
  const email = cell(fields, index.email);
  const fail = (reason: RowErrorReason, message: string): ParsedRow => ({ ok: false, line, email, error: { reason, message } });
  if (email === '') return fail('no_email', 'The row has no email address');
  if (!isValidEmail(email)) return fail('malformed_email', `'${email.slice(0, 80)}' is not an email address`);
  const subscribed = bool(cell(fields, index.subscribed_to_emails));
  if (subscribed === 'bad') return fail('malformed_value', `subscribed_to_emails must be true or false, not '${cell(fields, index.subscribed_to_emails).slice(0, 20)}'`);
  const complimentary = bool(cell(fields, index.complimentary_plan));
  if (complimentary === 'bad') return fail('malformed_value', `complimentary_plan must be true or false, not '${cell(fields, index.complimentary_plan).slice(0, 20)}'`);
  const customer = cell(fields, index.stripe_customer_id);
  if (customer !== '' && !STRIPE_CUSTOMER.test(customer)) return fail('malformed_value', `stripe_customer_id '${customer.slice(0, 40)}' is not a card processor customer id (cus_…)`);
  const createdRaw = cell(fields, index.created_at);
  const createdAt = createdRaw === '' ? null : new Date(createdRaw);
  if (createdAt !== null && Number.isNaN(createdAt.getTime())) return fail('malformed_value', `created_at '${createdRaw.slice(0, 40)}' is not a date`);
  const name = cell(fields, index.name);
  const { firstName, lastName } = name === '' ? { firstName: null, lastName: null } : splitName(name);
  return {
    ok: true,
    row: {
      line,
      email,
      firstName,
      lastName,
      subscribedToEmails: subscribed,
      complimentary: complimentary === true,
      stripeCustomerId: customer === '' ? null : customer,
      createdAt,
      tiers: splitList(cell(fields, index.tiers)),
    },
  };
}
