import { sql, type Kysely } from 'kysely';
import type { Clock } from '../lib/clock.js';
import type { DB } from '../db/types.js';

export interface TaskContext {
  /** The connection holding the task's advisory lock (on the embedded database, its only connection). */
  db: Kysely<DB>;
  clock: Clock;
}

export interface TaskDefinition {
  name: string;
  description: string;
  intervalSeconds: number;
  run(ctx: TaskContext): Promise<Record<string, unknown>>;
}

export type TaskOutcome =
  | { task: string; result: Record<string, unknown> }
  | { task: string; skipped: 'running_elsewhere' }
  | { task: string; error: string };

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

  async runOne(task: TaskDefinition): Promise<TaskOutcome> {
    return this.db.connection().execute(async (conn) => {
      const key = lockKey(task.name);
      const got = await sql<{ locked: boolean }>`select pg_try_advisory_lock(${key}) as locked`.execute(conn);
      if (!got.rows[0]?.locked) return { task: task.name, skipped: 'running_elsewhere' as const };
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
        const p = this.runOne(task).catch(() => undefined);
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
