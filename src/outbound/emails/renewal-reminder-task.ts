import type { Kysely } from 'kysely';
import type { DB } from '../../db/types.js';
import type { Clock } from '../../lib/clock.js';
import type { Settings } from '../../settings/store.js';
import type { TaskDefinition } from '../../tasks/scheduler.js';
import { queueMemberEmail } from './queue.js';

/**
 * Queues a renewal reminder for every auto-renewing subscription whose paid period ends within
 * `days` days. Once per period: the period end is part of the email's source, so later runs within the
 * same period queue nothing new, and the next period (a new period end) gets its own reminder.
 */
export async function queueRenewalReminders(db: Kysely<DB>, clock: Clock, days: number): Promise<{ queued: number }> {
  if (days <= 0) return { queued: 0 };
  const now = clock.now();
  const horizon = new Date(now.getTime() + days * 86_400_000);
  const due = await db
    .selectFrom('odi_order_items')
    .innerJoin('pro_products', 'pro_products.pro_product_id', 'odi_order_items.odi_pro_product_id')
    .leftJoin('sbt_subscription_tiers', 'sbt_subscription_tiers.sbt_subscription_tier_id', 'pro_products.pro_sbt_subscription_tier_id')
    .select([
      'odi_order_items.odi_order_item_id',
      'odi_order_items.odi_usr_user_id',
      'odi_order_items.odi_subscription_period_end',
      'pro_products.pro_name',
      'sbt_subscription_tiers.sbt_display_name',
    ])
    .where('odi_order_items.odi_is_subscription', '=', true)
    .where('odi_order_items.odi_subscription_status', '=', 'active')
    .where((eb) => eb.or([eb('odi_order_items.odi_subscription_cancel_at_period_end', 'is', null), eb('odi_order_items.odi_subscription_cancel_at_period_end', '=', false)]))
    .where('odi_order_items.odi_delete_time', 'is', null)
    .where('odi_order_items.odi_usr_user_id', 'is not', null)
    .where('odi_order_items.odi_subscription_period_end', '>', now)
    .where('odi_order_items.odi_subscription_period_end', '<=', horizon)
    .execute();
  let queued = 0;
  for (const item of due) {
    const periodEnd = item.odi_subscription_period_end!;
    const wrote = await queueMemberEmail(db, clock, {
      source: `renewal:${item.odi_order_item_id}:${periodEnd.toISOString()}`,
      template: 'renewal_reminder',
      userId: Number(item.odi_usr_user_id),
      data: { product_name: item.pro_name, tier_name: item.sbt_display_name ?? '', period_end: periodEnd.toISOString().slice(0, 10) },
    });
    if (wrote) queued++;
  }
  return { queued };
}

export function renewalReminderTask(settings: Settings): TaskDefinition {
  return {
    name: 'member_renewal_reminders',
    description: 'Queue a reminder email for auto-renewing subscriptions renewing within renewal_reminder_days (once per period)',
    intervalSeconds: 3600,
    run: async ({ db, clock }) => queueRenewalReminders(db, clock, settings.int('renewal_reminder_days')),
  };
}
