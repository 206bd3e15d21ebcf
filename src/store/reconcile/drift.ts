import type { Kysely } from 'kysely';
import type { DB } from '../../db/types.js';
import { formatTimestamp } from '../../lib/time.js';
import type { DriftEntry, ReconcileReport } from './reconcile.js';

/** The scheduled reconciliation's task name (its last run keeps the drift report). */
export const RECONCILE_TASK_NAME = 'store_reconcile';

export interface LastDriftReport {
  /** When the last scheduled run started; null when it never ran. */
  run_time: string | null;
  /** success or error; null when it never ran. */
  outcome: string | null;
  error: string | null;
  /** The report of that run; null when it never ran, failed, or was skipped (store_inactive says so). */
  report: ReconcileReport | null;
  skipped: string | null;
}

/** The last drift report of the scheduled reconciliation, as its task run recorded it. */
export async function lastDriftReport(db: Kysely<DB>): Promise<LastDriftReport> {
  const row = await db
    .selectFrom('tsk_task_runs')
    .select(['tsk_last_start_time', 'tsk_last_outcome', 'tsk_last_error', 'tsk_last_result'])
    .where('tsk_name', '=', RECONCILE_TASK_NAME)
    .executeTakeFirst();
  if (!row?.tsk_last_start_time) return { run_time: null, outcome: null, error: null, report: null, skipped: null };
  const raw = row.tsk_last_result;
  const result = (typeof raw === 'string' ? JSON.parse(raw) : raw) as Record<string, unknown> | null;
  const skipped = typeof result?.skipped === 'string' ? result.skipped : null;
  return {
    run_time: formatTimestamp(row.tsk_last_start_time),
    outcome: row.tsk_last_outcome,
    error: row.tsk_last_error,
    report: result && !skipped ? (result as unknown as ReconcileReport) : null,
    skipped,
  };
}

/** The entries of a report about these order items (one member's subscriptions). */
export function driftOf(report: ReconcileReport | null, orderItemIds: readonly number[]): DriftEntry[] {
  if (!report) return [];
  const ids = new Set(orderItemIds);
  return report.drift.filter((d) => ids.has(d.order_item_id));
}
