import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openDatabase, type Database } from '../../src/db/database.js';
import { Scheduler, type TaskDefinition } from '../../src/tasks/scheduler.js';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { onPostgres } from '../helpers/database.js';

/** A task that runs until the test releases it, counting how many of its runs overlap. */
function gatedTask(name: string) {
  let release!: () => void;
  let started!: () => void;
  const state = {
    gate: new Promise<void>((r) => (release = r)),
    started: new Promise<void>((r) => (started = r)),
    running: 0,
    maxRunning: 0,
    runs: 0,
  };
  const task: TaskDefinition = {
    name,
    description: 'waits for the test',
    intervalSeconds: 3600,
    async run() {
      state.running++;
      state.runs++;
      state.maxRunning = Math.max(state.maxRunning, state.running);
      started();
      await state.gate;
      state.running--;
      return { runs: state.runs };
    },
  };
  return { task, state, release: () => release() };
}

const constantTask = (name: string, result: Record<string, unknown>): TaskDefinition => ({
  name,
  description: name,
  intervalSeconds: 3600,
  run: async () => result,
});

describe('scheduler', () => {
  let t: TestApp;
  /** A second node: its own connections to the same database (on PGlite, the same one connection). */
  let otherNode: Database | undefined;
  beforeAll(async () => {
    t = await createTestApp();
    if (onPostgres) {
      const { rows } = await sql<{ name: string }>`select current_database() as name`.execute(t.services.db);
      const url = new URL(process.env.DATABASE_URL!);
      url.pathname = `/${rows[0]!.name}`;
      otherNode = await openDatabase({ databaseUrl: url.toString(), pgPoolMax: 2 });
    }
  });
  afterAll(async () => {
    await otherNode?.close();
    await t.close();
  });

  const runRow = (name: string) => t.services.db.selectFrom('tsk_task_runs').selectAll().where('tsk_name', '=', name).executeTakeFirst();

  it.runIf(onPostgres)('skips a task as running_elsewhere while another node holds its advisory lock (PostgreSQL)', async () => {
    const { task, state, release } = gatedTask('gated_pg');
    const nodeA = new Scheduler(t.services.db, t.clock, [task]);
    const nodeB = new Scheduler(otherNode!.db, t.clock, [task]);
    const first = nodeA.runNow('gated_pg');
    await state.started;
    expect(await nodeB.runNow('gated_pg')).toEqual([{ task: 'gated_pg', skipped: 'running_elsewhere' }]);
    release();
    expect(await first).toEqual([{ task: 'gated_pg', result: { runs: 1 } }]);
    expect((await runRow('gated_pg'))?.tsk_run_count).toBe(1); // a skip is not a run
    // The lock was released with the run: the other node now runs it.
    expect(await nodeB.runNow('gated_pg')).toEqual([{ task: 'gated_pg', result: { runs: 2 } }]);
    expect((await runRow('gated_pg'))?.tsk_run_count).toBe(2);
  });

  it.runIf(!onPostgres)('runs one task at a time on the embedded database, where one connection serialises both schedulers', async () => {
    const { task, state, release } = gatedTask('gated_pglite');
    const nodeA = new Scheduler(t.services.db, t.clock, [task]);
    const nodeB = new Scheduler(t.services.db, t.clock, [task]);
    const first = nodeA.runNow('gated_pglite');
    await state.started;
    const second = nodeB.runNow('gated_pglite'); // waits for the connection; the lock is free by then
    release();
    expect(await first).toEqual([{ task: 'gated_pglite', result: { runs: 1 } }]);
    expect(await second).toEqual([{ task: 'gated_pglite', result: { runs: 2 } }]);
    expect(state.maxRunning).toBe(1);
    expect((await runRow('gated_pglite'))?.tsk_run_count).toBe(2);
  });

  it("runNow('all') runs every task in order, and a name runs just that task", async () => {
    const s = new Scheduler(t.services.db, t.clock, [constantTask('first_task', { n: 1 }), constantTask('second_task', { n: 2 })]);
    expect(await s.runNow('all')).toEqual([
      { task: 'first_task', result: { n: 1 } },
      { task: 'second_task', result: { n: 2 } },
    ]);
    expect(await s.runNow('second_task')).toEqual([{ task: 'second_task', result: { n: 2 } }]);
    expect(await s.runNow('no_such_task')).toEqual([]);
    expect((await runRow('first_task'))?.tsk_run_count).toBe(1);
    expect((await runRow('second_task'))?.tsk_run_count).toBe(2);
  });

  it("the application's runNow('all') runs every registered task", async () => {
    const names = t.services.scheduler.tasks.map((task) => task.name);
    expect(names).toContain('purge_request_logs');
    const outcomes = await t.services.scheduler.runNow('all');
    expect(outcomes.map((o) => o.task)).toEqual(names);
    for (const o of outcomes) {
      // backup_site runs only every backup_schedule_hours, which is 0 (off) by default.
      if (o.task === 'backup_site') expect(o).toEqual({ task: 'backup_site', skipped: 'not_due', next_due_time: null });
      // A plugin's task (mailbox_fleet_recheck) waits for its plugin, inactive by default.
      else if (o.task.startsWith('mailbox_')) expect(o).toEqual({ task: o.task, skipped: 'plugin_inactive', plugin: 'mailbox' });
      else expect(o).toHaveProperty('result');
    }
  });

  it('records a failing task as an error outcome and releases its lock', async () => {
    let fail = true;
    const task: TaskDefinition = {
      name: 'flaky_task',
      description: 'fails once',
      intervalSeconds: 3600,
      async run() {
        if (fail) throw new Error('upstream unavailable');
        return { ok: true };
      },
    };
    const s = new Scheduler(t.services.db, t.clock, [task]);
    expect(await s.runNow('flaky_task')).toEqual([{ task: 'flaky_task', error: 'upstream unavailable' }]);
    const now = t.clock.now();
    expect(await runRow('flaky_task')).toEqual({
      tsk_name: 'flaky_task',
      tsk_last_start_time: now,
      tsk_last_end_time: now,
      tsk_last_outcome: 'error',
      tsk_last_error: 'upstream unavailable',
      tsk_last_result: null,
      tsk_run_count: 1,
    });
    fail = false;
    t.clock.advanceSeconds(60);
    const other = new Scheduler(otherNode?.db ?? t.services.db, t.clock, [task]);
    expect(await other.runNow('flaky_task')).toEqual([{ task: 'flaky_task', result: { ok: true } }]);
    expect(await runRow('flaky_task')).toMatchObject({ tsk_last_outcome: 'success', tsk_last_error: null, tsk_last_result: { ok: true }, tsk_run_count: 2 });
  });
  it('a task woken by its timer runs once per interval across nodes: a node woken later in the same interval skips it', async () => {
    let runs = 0;
    const task: TaskDefinition = { name: 'interval_task', description: 'counts', intervalSeconds: 60, run: async () => ({ runs: ++runs }) };
    const nodeA = new Scheduler(t.services.db, t.clock, [task]);
    const nodeB = new Scheduler(otherNode?.db ?? t.services.db, t.clock, [task]);
    expect(await nodeA.runOne(task, { woken: true })).toEqual({ task: 'interval_task', result: { runs: 1 } });
    // Node B started 20 s after node A: its timer wakes the task 20 s into A's interval.
    t.clock.advanceSeconds(20);
    expect(await nodeB.runOne(task, { woken: true })).toMatchObject({ task: 'interval_task', skipped: 'not_due' });
    // A's next wake-up, a whisker under an interval after its recorded start, runs it again.
    t.clock.advance(40_000 - 5);
    expect(await nodeA.runOne(task, { woken: true })).toEqual({ task: 'interval_task', result: { runs: 2 } });
    t.clock.advanceSeconds(20);
    expect(await nodeB.runOne(task, { woken: true })).toMatchObject({ task: 'interval_task', skipped: 'not_due' });
    // A run asked for by name (the CLI's task run) is never skipped for that.
    expect(await nodeB.runNow('interval_task')).toEqual([{ task: 'interval_task', result: { runs: 3 } }]);
    expect(await runRow('interval_task')).toMatchObject({ tsk_run_count: 3 });
  });
});
