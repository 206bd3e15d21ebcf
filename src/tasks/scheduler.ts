import { sql, type Kysely } from 'kysely';
import type { Clock } from '../lib/clock.js';
import { formatTimestamp } from '../lib/time.js';
import type { DB } from '../db/types.js';

export interface TaskContext {
  /** The connection holding the task's advisory lock (on the embedded database, its only connection). */
  db: Kysely<DB>;
  clock: Clock;
}

export interface TaskDefinition {
  name: string;
  description: string;
  /** How often the scheduler wakes the task. */
  intervalSeconds: number;
  /**
   * For a task whose work is due less often than it is woken, by a period read from settings: the period
   * now, in seconds (0: off). Such a task runs only when due by its last recorded run (see nextDueTime),
   * checked under its lock, so that on several nodes it runs once per period; a run not due is skipped
   * and not recorded.
   */
  periodSeconds?(): number;
  /** A plugin's task runs only while its plugin is active (src/plugins/tasks.ts); otherwise skipped, not recorded. */
  plugin?: { name: string; isActive(): boolean };
  run(ctx: TaskContext): Promise<Record<string, unknown>>;
}

export type TaskOutcome =
  | { task: string; result: Record<string, unknown> }
  | { task: string; skipped: 'running_elsewhere' }
  | { task: string; skipped: 'plugin_inactive'; plugin: string }
  | { task: string; skipped: 'not_due'; next_due_time: string | null }
  | { task: string; error: string };

/** A task with a period retries a failed run after at most this long, not a whole period later. */
export const RETRY_AFTER_FAILURE_SECONDS = 3600;

export interface LastRun {
  start: Date;
  outcome: string;
}

/**
 * When a task with a period is next due: never when the period is 0; now when it never ran; a period
 * after its last successful run's start; after a failed run, a period or RETRY_AFTER_FAILURE_SECONDS,
 * whichever is shorter.
 */
export function nextDueTime(periodSeconds: number, last: LastRun | null, now: Date): Date | null {
  if (periodSeconds <= 0) return null;
  if (!last) return now;
  const wait = last.outcome === 'success' ? periodSeconds : Math.min(periodSeconds, RETRY_AFTER_FAILURE_SECONDS);
  return new Date(last.start.getTime() + wait * 1000);
}

/** The last recorded run of a task (tsk_task_runs), if any. */
export async function lastRun(db: Kysely<DB>, name: string): Promise<LastRun | null> {
  const row = await db.selectFrom('tsk_task_runs').select(['tsk_last_start_time', 'tsk_last_outcome']).where('tsk_name', '=', name).executeTakeFirst();
  return row?.tsk_last_start_time ? { start: row.tsk_last_start_time, outcome: row.tsk_last_outcome ?? 'error' } : null;
}

/**
 * A timer-woken task without a period runs only when its last recorded run (on any node) started at least
 * this share of its interval ago. Every node wakes every task on its own timer, offset by when the node
 * started; without this check each node would run the task once per interval. The slack keeps one node's
 * own timer, which fires a hair less than an interval after its recorded start, from skipping a turn.
 */
export const TIMER_DUE_SHARE = 0.9;

/** Whether a task woken by its timer is due, by its last recorded run on any node. */
export function dueByInterval(intervalSeconds: number, last: LastRun | null, now: Date): boolean {
  return !last || now.getTime() - last.start.getTime() >= intervalSeconds * 1000 * TIMER_DUE_SHARE;
}

/** A stable 32-bit key per task name for pg_try_advisory_lock. */
function lockKey(name: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < name.length; i++) h = Math.imul(h ^ name.charCodeAt(i), 0x01000193);
  return h | 0;
}

/**
 * Runs named tasks on their intervals. Each run holds a PostgreSQL advisory lock (session-level, on one
 * pinned connection) so that exactly one node runs a task at a time; the outcome lands in tsk_task_runs.
 */
export class Scheduler {
  private timers: NodeJS.Timeout[] = [];
  private running = new Set<Promise<unknown>>();

  constructor(
    private readonly db: Kysely<DB>,
    private readonly clock: Clock,
    readonly tasks: TaskDefinition[],
  ) {}

  find(name: string): TaskDefinition | undefined {
    return this.tasks.find((t) => t.name === name);
  }

  /** Runs the task under its lock; `woken` (the timer's call) also skips a task another node ran this interval. */
  async runOne(task: TaskDefinition, opts: { woken?: boolean } = {}): Promise<TaskOutcome> {
    if (task.plugin && !task.plugin.isActive()) return { task: task.name, skipped: 'plugin_inactive', plugin: task.plugin.name };
    return this.db.connection().execute(async (conn) => {
      const key = lockKey(task.name);
      const got = await sql<{ locked: boolean }>`select pg_try_advisory_lock(${key}) as locked`.execute(conn);
      if (!got.rows[0]?.locked) return { task: task.name, skipped: 'running_elsewhere' as const };
      try {
        if (task.periodSeconds) {
          const now = this.clock.now();
          const due = nextDueTime(task.periodSeconds(), await lastRun(conn, task.name), now);
          if (due === null || due > now) return { task: task.name, skipped: 'not_due' as const, next_due_time: due && formatTimestamp(due) };
        } else if (opts.woken) {
          const last = await lastRun(conn, task.name);
          if (!dueByInterval(task.intervalSeconds, last, this.clock.now())) {
            return { task: task.name, skipped: 'not_due' as const, next_due_time: formatTimestamp(new Date(last!.start.getTime() + task.intervalSeconds * 1000)) };
          }
        }
        const started = this.clock.now();
        try {
          // The task runs on the connection that holds the lock: on the embedded database there is only one
          // connection, so asking the pool for another here would wait on ourselves forever.
          const result = await task.run({ db: conn, clock: this.clock });
          await this.recordRun(conn, task.name, started, 'success', null, result);
          return { task: task.name, result };
        } catch (e) {
          const message = e instanceof Error ? e.message : String(e);
          await this.recordRun(conn, task.name, started, 'error', message, null);
          return { task: task.name, error: message };
        }
      } finally {
        await sql`select pg_advisory_unlock(${key})`.execute(conn);
      }
    });
  }

  private async recordRun(
    conn: Kysely<DB>,
    name: string,
    started: Date,
    outcome: string,
    error: string | null,
    result: Record<string, unknown> | null,
  ): Promise<void> {
    const row = {
      tsk_last_start_time: started,
      tsk_last_end_time: this.clock.now(),
      tsk_last_outcome: outcome,
      tsk_last_error: error,
      tsk_last_result: result === null ? null : JSON.stringify(result),
    };
    await conn
      .insertInto('tsk_task_runs')
      .values({ tsk_name: name, ...row, tsk_run_count: 1 })
      .onConflict((oc) => oc.column('tsk_name').doUpdateSet({ ...row, tsk_run_count: sql`tsk_task_runs.tsk_run_count + 1` }))
      .execute();
  }

  /** Runs one task by name, or every task for 'all'. */
  async runNow(nameOrAll: string): Promise<TaskOutcome[]> {
    const selected = nameOrAll === 'all' ? this.tasks : this.tasks.filter((t) => t.name === nameOrAll);
    const out: TaskOutcome[] = [];
    for (const task of selected) out.push(await this.runOne(task));
    return out;
  }

  start(): void {
    for (const task of this.tasks) {
      const timer = setInterval(() => {
        const p = this.runOne(task, { woken: true }).catch(() => undefined);
        this.running.add(p);
        void p.finally(() => this.running.delete(p));
      }, task.intervalSeconds * 1000);
      timer.unref();
      this.timers.push(timer);
    }
  }

  async stop(): Promise<void> {
    for (const t of this.timers) clearInterval(t);
    this.timers = [];
    await Promise.allSettled([...this.running]);
  }
}
