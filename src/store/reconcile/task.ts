import type { Settings } from '../../settings/store.js';
import type { TaskDefinition } from '../../tasks/scheduler.js';
import { TierMembershipService } from '../../tiers/membership.js';
import type { StoreSystem } from '../index.js';
import { RECONCILE_TASK_NAME } from './drift.js';
import { reconcileSubscriptions } from './reconcile.js';

/**
 * Every store_reconcile_hours (0: off) reads each live or recently ended subscription from its provider
 * and repairs what differs (DESIGN 14). Its result is the drift report: the run's record in
 * tsk_task_runs keeps the last one, shown by management store/drift and on the admin member page.
 */
export function storeReconcileTask(services: { settings: Settings; store: StoreSystem }): TaskDefinition {
  const { settings, store } = services;
  return {
    name: RECONCILE_TASK_NAME,
    description: 'Read each live or recently ended subscription from its provider and repair what differs, every store_reconcile_hours',
    intervalSeconds: 3600,
    periodSeconds: () => settings.int('store_reconcile_hours') * 3600,
    async run({ db, clock }) {
      // With the store inactive no billing code runs.
      if (!store.active()) return { skipped: 'store_inactive' };
      const report = await reconcileSubscriptions({ ...store.context(db), clock }, new TierMembershipService(db, clock));
      return { ...report };
    },
  };
}
