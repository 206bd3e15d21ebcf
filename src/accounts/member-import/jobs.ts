import type { Readable } from 'node:stream';
import type { Generated, Kysely } from 'kysely';
import type { DB } from '../../db/types.js';
import { formatTimestamp } from '../../lib/time.js';
import { importMembers, type ImportDeps, type ImportSummary } from './import.js';

// The job table belongs to this module's migration (0037); it is typed here, where it is used.
interface MemberImportJobsTable {
  mij_member_import_job_id: Generated<number>;
  mij_fil_file_id: number;
  mij_usr_user_id: number;
  mij_dry_run: Generated<boolean>;
  mij_status: Generated<JobStatus>;
  mij_bytes_total: Generated<number>;
  mij_bytes_done: Generated<number>;
  mij_rows: Generated<number>;
  mij_created: Generated<number>;
  mij_updated: Generated<number>;
  mij_unchanged: Generated<number>;
  mij_errors: Generated<number>;
  mij_report: unknown;
  mij_error: string | null;
  mij_create_time: Generated<Date>;
  mij_start_time: Date | null;
  mij_end_time: Date | null;
  mij_update_time: Generated<Date>;
}

type JobDB = DB & { mij_member_import_jobs: MemberImportJobsTable };
const jobsDb = (db: Kysely<DB>) => db.withTables<{ mij_member_import_jobs: MemberImportJobsTable }>() as unknown as Kysely<JobDB>;

export type JobStatus = 'queued' | 'running' | 'done' | 'failed';

/** A running job whose progress has not moved for this long lost its runner (a restart): it may be taken again. */
export const STALE_JOB_SECONDS = 120;

/** A job as the API and the admin page show it. */
export interface ImportJobView {
  job_id: number;
  file_id: number;
  dry_run: boolean;
  status: JobStatus;
  bytes_total: number;
  bytes_done: number;
  /** 0 to 1, by bytes read. */
  progress: number;
  rows: number;
  counts: { create: number; update: number; unchanged: number; error: number };
  error: string | null;
  report: ImportSummary | null;
  create_time: string;
  start_time: string | null;
  end_time: string | null;
}

export async function createImportJob(db: Kysely<DB>, job: { fileId: number; userId: number; bytesTotal: number; dryRun: boolean; now: Date }): Promise<number> {
  const row = await jobsDb(db)
    .insertInto('mij_member_import_jobs')
    .values({ mij_fil_file_id: job.fileId, mij_usr_user_id: job.userId, mij_dry_run: job.dryRun, mij_bytes_total: job.bytesTotal, mij_report: null, mij_error: null, mij_start_time: null, mij_end_time: null, mij_create_time: job.now, mij_update_time: job.now })
    .returning('mij_member_import_job_id')
    .executeTakeFirstOrThrow();
  return Number(row.mij_member_import_job_id);
}

export async function readImportJob(db: Kysely<DB>, jobId: number): Promise<(ImportJobView & { user_id: number }) | null> {
  const r = await jobsDb(db).selectFrom('mij_member_import_jobs').selectAll().where('mij_member_import_job_id', '=', jobId).executeTakeFirst();
  if (!r) return null;
  const total = Number(r.mij_bytes_total);
  const done = Number(r.mij_bytes_done);
  return {
    job_id: Number(r.mij_member_import_job_id),
    user_id: Number(r.mij_usr_user_id),
    file_id: Number(r.mij_fil_file_id),
    dry_run: r.mij_dry_run,
    status: r.mij_status,
    bytes_total: total,
    bytes_done: done,
    progress: r.mij_status === 'done' ? 1 : total > 0 ? Math.min(1, done / total) : 0,
    rows: r.mij_rows,
    counts: { create: r.mij_created, update: r.mij_updated, unchanged: r.mij_unchanged, error: r.mij_errors },
    error: r.mij_error,
    report: (typeof r.mij_report === 'string' ? JSON.parse(r.mij_report) : r.mij_report) as ImportSummary | null,
    create_time: formatTimestamp(r.mij_create_time),
    start_time: r.mij_start_time ? formatTimestamp(r.mij_start_time) : null,
    end_time: r.mij_end_time ? formatTimestamp(r.mij_end_time) : null,
  };
}

/** Takes a queued job (or one whose runner stopped): true when this caller now runs it. */
async function claimJob(db: Kysely<DB>, jobId: number, now: Date): Promise<boolean> {
  const staleBefore = new Date(now.getTime() - STALE_JOB_SECONDS * 1000);
  const res = await jobsDb(db)
    .updateTable('mij_member_import_jobs')
    .set({ mij_status: 'running', mij_start_time: now, mij_update_time: now, mij_error: null })
    .where('mij_member_import_job_id', '=', jobId)
    .where((eb) => eb.or([eb('mij_status', '=', 'queued'), eb.and([eb('mij_status', '=', 'running'), eb('mij_update_time', '<', staleBefore)])]))
    .executeTakeFirst();
  return Number(res.numUpdatedRows) > 0;
}

/** Jobs waiting for a runner: queued, or running with no progress for STALE_JOB_SECONDS. */
export async function waitingJobs(db: Kysely<DB>, now: Date): Promise<number[]> {
  const staleBefore = new Date(now.getTime() - STALE_JOB_SECONDS * 1000);
  const rows = await jobsDb(db)
    .selectFrom('mij_member_import_jobs')
    .select('mij_member_import_job_id')
    .where((eb) => eb.or([eb('mij_status', '=', 'queued'), eb.and([eb('mij_status', '=', 'running'), eb('mij_update_time', '<', staleBefore)])]))
    .orderBy('mij_member_import_job_id')
    .execute();
  return rows.map((r) => Number(r.mij_member_import_job_id));
}

/** What a runner needs besides the import's own deps: the file, and who started the job. */
export interface JobRunnerDeps {
  importDeps(actorUserId: number): Promise<ImportDeps>;
  /** The job's uploaded file as a stream; null when it is gone. */
  openFile(fileId: number, ownerUserId: number): Promise<Readable | null>;
}

/**
 * Runs member import jobs in this process, in the background: each job is claimed in the database first,
 * so that of several runners (nodes, the admin page and the scheduler's pickup) exactly one runs it.
 * A job restarted after a crash imports the file again from its start (the import is idempotent).
 */
export class MemberImportRunner {
  private readonly inFlight = new Map<number, Promise<void>>();

  constructor(
    private readonly db: Kysely<DB>,
    private readonly clock: { now(): Date },
    private readonly deps: JobRunnerDeps,
  ) {}

  /**
   * Starts every waiting job not already running here; returns the ids started. `db`: the connection to
   * claim them on (a scheduled task's own: on the embedded database the task holds the only one).
   */
  async startWaiting(db: Kysely<DB> = this.db): Promise<number[]> {
    const started: number[] = [];
    for (const id of await waitingJobs(db, this.clock.now())) if (await this.start(id, db)) started.push(id);
    return started;
  }

  /** Starts one job in the background when it can be claimed; the job itself runs on the runner's database. */
  async start(jobId: number, db: Kysely<DB> = this.db): Promise<boolean> {
    if (this.inFlight.has(jobId)) return false;
    if (!(await claimJob(db, jobId, this.clock.now()))) return false;
    const run = this.run(jobId).finally(() => this.inFlight.delete(jobId));
    this.inFlight.set(jobId, run);
    return true;
  }

  /** Resolves when the job running here (if any) has ended. */
  async settled(jobId: number): Promise<void> {
    await this.inFlight.get(jobId);
  }

  private async run(jobId: number): Promise<void> {
    const jobs = jobsDb(this.db);
    const job = await readImportJob(this.db, jobId);
    if (!job) return;
    try {
      const stream = await this.deps.openFile(job.file_id, job.user_id);
      if (!stream) throw new Error('The uploaded file is gone');
      const summary = await importMembers(await this.deps.importDeps(job.user_id), stream, {
        dryRun: job.dry_run,
        onProgress: async (p) => {
          await jobs
            .updateTable('mij_member_import_jobs')
            .set({ mij_bytes_done: p.bytesRead, mij_rows: p.rows, mij_created: p.counts.create, mij_updated: p.counts.update, mij_unchanged: p.counts.unchanged, mij_errors: p.counts.error, mij_update_time: this.clock.now() })
            .where('mij_member_import_job_id', '=', jobId)
            .execute();
        },
      });
      await jobs
        .updateTable('mij_member_import_jobs')
        .set({ mij_status: 'done', mij_bytes_done: job.bytes_total, mij_report: JSON.stringify(summary), mij_end_time: this.clock.now(), mij_update_time: this.clock.now() })
        .where('mij_member_import_job_id', '=', jobId)
        .execute();
    } catch (e) {
      await jobs
        .updateTable('mij_member_import_jobs')
        .set({ mij_status: 'failed', mij_error: (e instanceof Error ? e.message : String(e)).slice(0, 1000), mij_end_time: this.clock.now(), mij_update_time: this.clock.now() })
        .where('mij_member_import_job_id', '=', jobId)
        .execute();
    }
  }
}
