import { lastDriftReport } from '../../../../store/reconcile/drift.js';
import { defineManagementHandler } from '../../define.js';

export default defineManagementHandler({
  method: 'GET',
  path: 'store/drift',
  description:
    'The last drift report of the scheduled reconciliation (task store_reconcile, every store_reconcile_hours): subscriptions checked with their provider, where ours differed and what was done, and providers that could not be read; repair with `gatehouse store reconcile`',
  async handle(_req, { services }) {
    return { ...(await lastDriftReport(services.db)) };
  },
});
