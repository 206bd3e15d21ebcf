import type { Kysely } from 'kysely';
import { runStatements } from './run-statements.js';

// Billing-issue states (DESIGN 14). A subscription whose renewal payment failed is in_grace until
// odi_subscription_grace_until (access kept), then on_hold (access removed, recoverable); a paused one
// is paused until odi_subscription_resume_time when the provider states it. The grace-expiry check of
// the period-end task reads in_grace items by their grace end, so those are indexed.
export async function up(db: Kysely<any>): Promise<void> {
  await runStatements(db, [
    `alter table odi_order_items add column odi_subscription_grace_until timestamp(6)`,
    `alter table odi_order_items add column odi_subscription_resume_time timestamp(6)`,
    `create index odi_order_items_grace on odi_order_items (odi_subscription_grace_until) where odi_subscription_status = 'in_grace'`,
  ]);
}
