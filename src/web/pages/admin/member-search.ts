import { sql, type ExpressionBuilder, type Kysely } from 'kysely';
import type { AssignmentMethod, DB, PaymentSource, SubscriptionStatus } from '../../../db/types.js';
import { likeContains } from '../../../lib/like.js';
import { BILLING_SOURCES } from '../../../tiers/membership.js';
import { PAGE_SIZE } from './list-query.js';

/**
 * A member's billing status as the list filters it, derived from the states of their subscriptions'
 * order items (DESIGN 14). A member matches a status when one of their subscriptions is in it (with the
 * billing source, when that filter is set too):
 * - active: `active` (renewing);
 * - billing_issue: `in_grace` or `on_hold` (a renewal payment failed, the provider is retrying);
 * - paused: `paused` (access removed until the provider resumes it);
 * - ending: `cancelled` (ends at the paid period's end, access kept until then);
 * - ended: `expired`, `refunded` or `replaced`, and no subscription in a current state;
 * - none: no subscription at all.
 */
export const MEMBER_STATUSES = ['active', 'billing_issue', 'paused', 'ending', 'ended', 'none'] as const;
export type MemberStatus = (typeof MEMBER_STATUSES)[number];

export const MEMBER_STATUS_LABELS: Record<MemberStatus, string> = {
  active: 'Active (renewing)',
  billing_issue: 'Billing issue (grace or on hold)',
  paused: 'Paused',
  ending: 'Cancelled, ending at period end',
  ended: 'Ended (expired, refunded, replaced)',
  none: 'No subscription',
};

/** The subscription states of each status group. */
const STATUS_STATES: Record<Exclude<MemberStatus, 'none'>, readonly SubscriptionStatus[]> = {
  active: ['active'],
  billing_issue: ['in_grace', 'on_hold'],
  paused: ['paused'],
  ending: ['cancelled'],
  ended: ['expired', 'refunded', 'replaced'],
};
/** A subscription in one of these states is current: it has not ended. */
export const CURRENT_STATES: readonly SubscriptionStatus[] = ['active', 'in_grace', 'on_hold', 'paused', 'cancelled'];

/** The billing source filter: a live subscription billed through one of the four sources, or a tier assigned by hand. */
export type MemberSource = PaymentSource | 'manual';
export const MEMBER_SOURCES: readonly MemberSource[] = [...BILLING_SOURCES, 'manual'];

export interface MemberFilter {
  /** Part of the name or email (case-insensitive); '' for everyone. */
  q: string;
  /** A tier id, 'none' (in no tier), or null (any). */
  tier: number | 'none' | null;
  source: MemberSource | null;
  status: MemberStatus | null;
  page: number;
}

export interface MemberRow {
  userId: number;
  email: string;
  name: string;
  permission: number;
  created: Date;
  tier: { id: number; name: string; method: AssignmentMethod } | null;
  /** The member's current subscriptions (or, when none is current, the latest one), newest first. */
  subscriptions: Array<{ source: PaymentSource | null; status: SubscriptionStatus }>;
}

type Eb = ExpressionBuilder<DB, 'usr_users'>;

/** Subscription order items of the row's user (only those with a state: a checkout not yet paid has none). */
function subscriptionsOf(eb: Eb, states: readonly SubscriptionStatus[], source: PaymentSource | null) {
  let q = eb
    .selectFrom('odi_order_items')
    .select('odi_order_item_id')
    .whereRef('odi_usr_user_id', '=', 'usr_user_id')
    .where('odi_is_subscription', '=', true)
    .where('odi_delete_time', 'is', null)
    .where('odi_subscription_status', 'in', [...states]);
  if (source) q = q.where('odi_payment_source', '=', source);
  return q;
}

function filtered(db: Kysely<DB>, f: MemberFilter) {
  let q = db.selectFrom('usr_users').where('usr_delete_time', 'is', null);
  if (f.q !== '') {
    const pattern = likeContains(f.q);
    q = q.where((eb) =>
      eb.or([
        eb(sql<string>`lower(usr_email)`, 'like', pattern),
        eb(sql<string>`lower(usr_first_name || ' ' || coalesce(usr_last_name, ''))`, 'like', pattern),
      ]),
    );
  }
  if (f.tier === 'none') {
    q = q.where((eb) => eb.not(eb.exists(eb.selectFrom('grm_group_members').select('grm_group_member_id').whereRef('grm_foreign_key_id', '=', 'usr_user_id').where('grm_sbt_subscription_tier_id', 'is not', null))));
  } else if (f.tier !== null) {
    const tierId = f.tier;
    q = q.where((eb) => eb.exists(eb.selectFrom('grm_group_members').select('grm_group_member_id').whereRef('grm_foreign_key_id', '=', 'usr_user_id').where('grm_sbt_subscription_tier_id', '=', tierId)));
  }
  const billed = f.source !== null && f.source !== 'manual' ? f.source : null;
  if (f.source === 'manual') {
    q = q.where((eb) =>
      eb.exists(
        eb.selectFrom('grm_group_members').select('grm_group_member_id').whereRef('grm_foreign_key_id', '=', 'usr_user_id').where('grm_sbt_subscription_tier_id', 'is not', null).where('grm_assignment_method', '=', 'manual'),
      ),
    );
  }
  const status = f.status;
  if (status === 'none') {
    q = q.where((eb) => eb.not(eb.exists(subscriptionsOf(eb, [...CURRENT_STATES, ...STATUS_STATES.ended], null))));
    if (billed) q = q.where(sql<boolean>`false`);
  } else if (status === 'ended') {
    q = q.where((eb) => eb.and([eb.exists(subscriptionsOf(eb, STATUS_STATES.ended, billed)), eb.not(eb.exists(subscriptionsOf(eb, CURRENT_STATES, null)))]));
  } else if (status !== null) {
    q = q.where((eb) => eb.exists(subscriptionsOf(eb, STATUS_STATES[status], billed)));
  } else if (billed) {
    q = q.where((eb) => eb.exists(subscriptionsOf(eb, CURRENT_STATES, billed)));
  }
  return q;
}

/** One page of members matching the filter (newest account first, then by id: a stable order) and the total. */
export async function searchMembers(db: Kysely<DB>, f: MemberFilter): Promise<{ total: number; rows: MemberRow[] }> {
  const counted = await filtered(db, f)
    .select((eb) => eb.fn.countAll<string | number>().as('n'))
    .executeTakeFirstOrThrow();
  const total = Number(counted.n);
  const users = await filtered(db, f)
    .leftJoin('grm_group_members', (join) => join.onRef('grm_foreign_key_id', '=', 'usr_user_id').on('grm_sbt_subscription_tier_id', 'is not', null))
    .leftJoin('sbt_subscription_tiers', 'sbt_subscription_tier_id', 'grm_sbt_subscription_tier_id')
    .select(['usr_user_id', 'usr_email', 'usr_first_name', 'usr_last_name', 'usr_permission', 'usr_create_time', 'sbt_subscription_tier_id', 'sbt_display_name', 'grm_assignment_method'])
    .orderBy('usr_create_time', 'desc')
    .orderBy('usr_user_id', 'desc')
    .limit(PAGE_SIZE)
    .offset((f.page - 1) * PAGE_SIZE)
    .execute();
  const ids = users.map((u) => Number(u.usr_user_id));
  const subs =
    ids.length === 0
      ? []
      : await db
          .selectFrom('odi_order_items')
          .select(['odi_order_item_id', 'odi_usr_user_id', 'odi_payment_source', 'odi_subscription_status'])
          .where('odi_usr_user_id', 'in', ids)
          .where('odi_is_subscription', '=', true)
          .where('odi_delete_time', 'is', null)
          .where('odi_subscription_status', 'is not', null)
          .orderBy('odi_order_item_id', 'desc')
          .execute();
  const rows = users.map((u): MemberRow => {
    const own = subs.filter((s) => Number(s.odi_usr_user_id) === Number(u.usr_user_id));
    const current = own.filter((s) => CURRENT_STATES.includes(s.odi_subscription_status!));
    const shown = current.length > 0 ? current : own.slice(0, 1);
    return {
      userId: Number(u.usr_user_id),
      email: u.usr_email,
      name: [u.usr_first_name, u.usr_last_name].filter(Boolean).join(' '),
      permission: Number(u.usr_permission),
      created: u.usr_create_time,
      tier: u.sbt_subscription_tier_id === null ? null : { id: Number(u.sbt_subscription_tier_id), name: u.sbt_display_name ?? '', method: u.grm_assignment_method ?? 'other' },
      subscriptions: shown.map((s) => ({ source: s.odi_payment_source, status: s.odi_subscription_status! })),
    };
  });
  return { total, rows };
}
