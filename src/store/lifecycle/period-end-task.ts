import type { Settings } from '../../settings/store.js';
import { processPeriodEnds } from './period-end.js';
import type { TaskDefinition } from '../../tasks/scheduler.js';

/**
 * Ends cancelled subscriptions and applies scheduled downgrades when their paid period is over. Access
 * never outlives the paid period by more than this interval, and never ends before it.
 */
export function subscriptionPeriodEndTask(settings: Settings): TaskDefinition {
  return {
    name: 'subscription_period_end',
    description: 'Expire cancelled subscriptions and apply scheduled downgrades at the end of their paid period; hold subscriptions whose grace period ended',
    intervalSeconds: 60,
    run: async ({ db, clock }) => ({ ...(await processPeriodEnds(db, clock, settings)) }),
  };
}
