import type { Kysely } from 'kysely';
import type { DB } from '../db/types.js';
import { formatTimestamp } from '../lib/time.js';
import { LIVE_STATUSES } from './orders.js';

export const CONFLICTS_LIMIT = 200;

/**
 * Purchases refused for tier purposes because another billing source's subscription was active for the
 * user (one active source per user), newest first, with the sources the user holds live now.
 */
export async function listSourceConflicts(db: Kysely<DB>, limit = CONFLICTS_LIMIT) {
  const rows = await db
    .selectFrom('odi_order_items')
    .select([
      'odi_order_item_id',
      'odi_ord_order_id',
      'odi_usr_user_id',
      'odi_pro_product_id',
      'odi_payment_source',
      'odi_subscription_reference',
      'odi_subscription_status',
      'odi_source_conflict_time',
    ])
    .where('odi_source_conflict_time', 'is not', null)
    .orderBy('odi_source_conflict_time', 'desc')
    .orderBy('odi_order_item_id', 'desc')
    .limit(limit)
    .execute();
  const users = [...new Set(rows.map((r) => r.odi_usr_user_id).filter((u): u is number => u !== null))];
  const live = users.length
    ? await db
        .selectFrom('odi_order_items')
        .select(['odi_usr_user_id', 'odi_payment_source'])
        .distinct()
        .where('odi_usr_user_id', 'in', users)
        .where('odi_subscription_status', 'in', [...LIVE_STATUSES])
        .where('odi_source_conflict_time', 'is', null)
        .where('odi_payment_source', 'is not', null)
        .execute()
    : [];
  const liveByUser = new Map<number, string[]>();
  for (const l of live) {
    const list = liveByUser.get(Number(l.odi_usr_user_id)) ?? [];
    list.push(String(l.odi_payment_source));
    liveByUser.set(Number(l.odi_usr_user_id), list.sort());
  }
  return rows.map((r) => ({
    order_item_id: Number(r.odi_order_item_id),
    order_id: Number(r.odi_ord_order_id),
    user_id: r.odi_usr_user_id === null ? null : Number(r.odi_usr_user_id),
    product_id: Number(r.odi_pro_product_id),
    payment_source: r.odi_payment_source,
    subscription_reference: r.odi_subscription_reference,
    subscription_status: r.odi_subscription_status,
    flagged_time: formatTimestamp(r.odi_source_conflict_time!),
    active_sources: r.odi_usr_user_id === null ? [] : (liveByUser.get(Number(r.odi_usr_user_id)) ?? []),
  }));
}
