import { statfs } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { sql } from 'kysely';
import type { Database } from '../../db/database.js';
import type { Services } from '../../services.js';
import { nextDueTime } from '../../tasks/scheduler.js';

/** Space on the filesystem holding DATA_DIR (its nearest existing ancestor, before the first start). */
export async function diskUsage(dataDir: string): Promise<Record<string, number> | null> {
  for (let dir = path.resolve(dataDir); ; dir = path.dirname(dir)) {
    try {
      const s = await statfs(dir);
      const total = s.blocks * s.bsize;
      const free = s.bfree * s.bsize;
      return { total_bytes: total, free_bytes: free, available_bytes: s.bavail * s.bsize, used_bytes: total - free };
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== 'ENOENT' || path.dirname(dir) === dir) return null;
    }
  }
}

export function memoryUsage(): Record<string, number> {
  const total = os.totalmem();
  const free = os.freemem();
  const proc = process.memoryUsage();
  return { total_bytes: total, free_bytes: free, used_bytes: total - free, process_rss_bytes: proc.rss, process_heap_used_bytes: proc.heapUsed };
}

export function loadAverage(): Record<string, number> {
  const [one = 0, five = 0, fifteen = 0] = os.loadavg();
  return { one_minute: one, five_minutes: five, fifteen_minutes: fifteen, cpus: os.availableParallelism() };
}

export function uptime(): Record<string, number> {
  return { system_seconds: Math.floor(os.uptime()), process_seconds: Math.floor(process.uptime()) };
}

/** A `select 1` round trip, timed. A failure reports its error class only (messages can name hosts and users). */
export async function databaseLiveness(database: Database): Promise<Record<string, unknown>> {
  const started = performance.now();
  try {
    await sql`select 1`.execute(database.db);
    return { kind: database.kind, alive: true, latency_ms: Math.round((performance.now() - started) * 100) / 100 };
  } catch (e) {
    return { kind: database.kind, alive: false, latency_ms: null, error: e instanceof Error ? e.name : 'Error' };
  }
}

/**
 * The databases the site can reach. On PostgreSQL, every non-template database that accepts connections
 * and that the site's role may connect to; on the embedded database, its single database.
 */
export async function listDatabases(database: Database): Promise<Record<string, unknown>> {
  const current = await sql<{ name: string; size_bytes: number }>`select current_database() as name, pg_database_size(current_database())::int8 as size_bytes`.execute(database.db);
  const here = current.rows[0];
  let names: string[] = here ? [here.name] : [];
  if (database.kind === 'postgres') {
    const rows = await sql<{ datname: string }>`
      select datname from pg_database
      where not datistemplate and datallowconn and coalesce(has_database_privilege(oid, 'CONNECT'), false)
      order by datname`.execute(database.db);
    names = rows.rows.map((r) => r.datname);
  }
  return {
    kind: database.kind,
    current: here?.name ?? null,
    current_size_bytes: here ? Number(here.size_bytes) : null,
    databases: names.map((name) => ({ name, current: name === here?.name })),
  };
}

export type CronStatus = 'ok' | 'failing' | 'overdue' | 'never_run';

/**
 * Scheduled-task health from the scheduler's own records (tsk_task_runs), for every registered task,
 * plus recorded tasks that are no longer registered. Overdue: the last start is more than two intervals ago.
 */
export async function cronHealth(services: Pick<Services, 'db' | 'clock' | 'scheduler'>): Promise<Record<string, unknown>[]> {
  const rows = await services.db.selectFrom('tsk_task_runs').selectAll().orderBy('tsk_name').execute();
  const byName = new Map(rows.map((r) => [r.tsk_name, r]));
  const nowMs = services.clock.nowMs();
  const registered = services.scheduler.tasks.filter((t) => !t.plugin || t.plugin.isActive()).map((task) => {
    const run = byName.get(task.name);
    // A task with a period from settings runs once per period (0: never), not on each wake.
    const period = task.periodSeconds?.();
    let status: CronStatus = 'never_run';
    if (run?.tsk_last_start_time) {
      const last = { start: run.tsk_last_start_time, outcome: run.tsk_last_outcome ?? 'error' };
      const due = period === undefined ? null : nextDueTime(period, last, services.clock.now());
      const overdue =
        period === undefined
          ? nowMs - last.start.getTime() > 2 * task.intervalSeconds * 1000
          : due !== null && nowMs - due.getTime() > 2 * task.intervalSeconds * 1000;
      if (overdue) status = 'overdue';
      else status = run.tsk_last_outcome === 'success' ? 'ok' : 'failing';
    }
    return {
      name: task.name,
      description: task.description,
      registered: true,
      interval_seconds: period === undefined ? task.intervalSeconds : period > 0 ? period : null,
      status,
      last_start_time: run?.tsk_last_start_time ?? null,
      last_end_time: run?.tsk_last_end_time ?? null,
      last_outcome: run?.tsk_last_outcome ?? null,
      last_error: run?.tsk_last_error ?? null,
      run_count: run?.tsk_run_count ?? 0,
    };
  });
  const known = new Set(services.scheduler.tasks.filter((t) => !t.plugin || t.plugin.isActive()).map((t) => t.name));
  const orphans = rows
    .filter((r) => !known.has(r.tsk_name))
    .map((run) => ({
      name: run.tsk_name,
      description: null,
      registered: false,
      interval_seconds: null,
      status: (run.tsk_last_outcome === 'success' ? 'ok' : 'failing') as CronStatus,
      last_start_time: run.tsk_last_start_time,
      last_end_time: run.tsk_last_end_time,
      last_outcome: run.tsk_last_outcome,
      last_error: run.tsk_last_error,
      run_count: run.tsk_run_count,
    }));
  return [...registered, ...orphans];
}
