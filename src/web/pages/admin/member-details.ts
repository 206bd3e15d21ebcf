import type { Kysely } from 'kysely';
import type { AssignmentMethod, DB, PaymentSource } from '../../../db/types.js';
import { TIER_MEMBERSHIP_FIELD } from '../../../tiers/change-tracking.js';

/** How many of a member's orders, tier changes and keys the member page lists (newest first). */
export const DETAIL_ROWS = 50;

export interface TierMembership {
  tierId: number;
  name: string;
  active: boolean;
  deleted: boolean;
  method: AssignmentMethod;
  assigned: Date;
  /** What the latest change into this tier says about it: an import, a reconciliation, a billing source. */
  how: string | null;
  source: PaymentSource | null;
}

export interface TierHistoryRow {
  id: number;
  time: Date;
  reason: string;
  from: string | null;
  to: string | null;
  /** A tier whose grant was skipped (the level rule, or the tier unavailable). */
  requested: string | null;
  by: { id: number; email: string | null } | null;
  how: string | null;
  source: string | null;
  reference: string | null;
}

export interface KeyRow {
  id: number;
  name: string | null;
  type: 'machine' | 'session';
  permission: number;
  created: Date;
  lastUsed: Date | null;
  expires: Date | null;
  active: boolean;
}

const parseMeta = (text: string | null): Record<string, unknown> => {
  if (!text) return {};
  try {
    const v = JSON.parse(text) as unknown;
    return typeof v === 'object' && v !== null ? (v as Record<string, unknown>) : {};
  } catch {
    return {};
  }
};
const str = (v: unknown) => (typeof v === 'string' && v !== '' ? v : null);

/** The member's tier membership row (whatever the tier's state), with how it came about. */
export async function tierMembership(db: Kysely<DB>, userId: number): Promise<TierMembership | null> {
  const row = await db
    .selectFrom('grm_group_members')
    .innerJoin('sbt_subscription_tiers', 'sbt_subscription_tier_id', 'grm_sbt_subscription_tier_id')
    .select(['sbt_subscription_tier_id', 'sbt_display_name', 'sbt_is_active', 'sbt_delete_time', 'grm_assignment_method', 'grm_assigned_time'])
    .where('grm_foreign_key_id', '=', userId)
    .where('grm_sbt_subscription_tier_id', 'is not', null)
    .executeTakeFirst();
  if (!row) return null;
  const tierId = Number(row.sbt_subscription_tier_id);
  const change = await db
    .selectFrom('cht_change_tracking')
    .select(['cht_metadata'])
    .where('cht_usr_user_id', '=', userId)
    .where('cht_field_name', '=', TIER_MEMBERSHIP_FIELD)
    .where('cht_new_value', '=', String(tierId))
    .orderBy('cht_change_time', 'desc')
    .orderBy('cht_change_tracking_id', 'desc')
    .limit(1)
    .executeTakeFirst();
  const meta = parseMeta(change?.cht_metadata ?? null);
  return {
    tierId,
    name: row.sbt_display_name,
    active: Boolean(row.sbt_is_active),
    deleted: row.sbt_delete_time !== null,
    method: row.grm_assignment_method,
    assigned: row.grm_assigned_time,
    how: str(meta.how),
    source: (str(meta.source) as PaymentSource | null) ?? null,
  };
}

/** The member's tier changes from change tracking (grants, removals, skips, manual assignments), newest first. */
export async function tierHistory(db: Kysely<DB>, userId: number): Promise<TierHistoryRow[]> {
  const rows = await db
    .selectFrom('cht_change_tracking')
    .leftJoin('usr_users', 'usr_user_id', 'cht_changed_by_usr_user_id')
    .select(['cht_change_tracking_id', 'cht_change_time', 'cht_change_reason', 'cht_old_value', 'cht_new_value', 'cht_changed_by_usr_user_id', 'usr_email', 'cht_reference_type', 'cht_reference_id', 'cht_metadata'])
    .where('cht_usr_user_id', '=', userId)
    .where('cht_field_name', '=', TIER_MEMBERSHIP_FIELD)
    .orderBy('cht_change_time', 'desc')
    .orderBy('cht_change_tracking_id', 'desc')
    .limit(DETAIL_ROWS)
    .execute();
  const ids = [...new Set(rows.flatMap((r) => [r.cht_old_value, r.cht_new_value]).filter((v): v is string => v !== null && /^\d{1,9}$/.test(v)).map(Number))];
  const tiers =
    ids.length === 0 ? [] : await db.selectFrom('sbt_subscription_tiers').select(['sbt_subscription_tier_id', 'sbt_display_name']).where('sbt_subscription_tier_id', 'in', ids).execute();
  const tierName = (v: string | null, fallback: unknown) =>
    v === null ? null : (tiers.find((t) => String(t.sbt_subscription_tier_id) === v)?.sbt_display_name ?? str(fallback) ?? `tier #${v}`);
  return rows.map((r) => {
    const meta = parseMeta(r.cht_metadata);
    return {
      id: Number(r.cht_change_tracking_id),
      time: r.cht_change_time,
      reason: r.cht_change_reason ?? '—',
      from: tierName(r.cht_old_value, meta.old_tier),
      to: tierName(r.cht_new_value, meta.new_tier),
      requested: str(meta.requested_tier),
      by: r.cht_changed_by_usr_user_id === null ? null : { id: Number(r.cht_changed_by_usr_user_id), email: r.usr_email },
      how: str(meta.how),
      source: str(meta.source),
      reference: r.cht_reference_type ? `${r.cht_reference_type}${r.cht_reference_id === null ? '' : ` #${r.cht_reference_id}`}` : null,
    };
  });
}

/** The member's API keys (machine) and app sessions (session keys) that are not deleted; never their secrets. */
export async function memberKeys(db: Kysely<DB>, userId: number, now: Date): Promise<KeyRow[]> {
  const rows = await db
    .selectFrom('apk_api_keys')
    .select(['apk_api_key_id', 'apk_name', 'apk_type', 'apk_permission', 'apk_create_time', 'apk_last_used_time', 'apk_expires_time', 'apk_is_active'])
    .where('apk_usr_user_id', '=', userId)
    .where('apk_delete_time', 'is', null)
    .orderBy('apk_create_time', 'desc')
    .orderBy('apk_api_key_id', 'desc')
    .limit(DETAIL_ROWS)
    .execute();
  return rows.map((k) => ({
    id: Number(k.apk_api_key_id),
    name: k.apk_name,
    type: k.apk_type,
    permission: Number(k.apk_permission),
    created: k.apk_create_time,
    lastUsed: k.apk_last_used_time,
    expires: k.apk_expires_time,
    active: Boolean(k.apk_is_active) && (k.apk_expires_time === null || k.apk_expires_time > now),
  }));
}
