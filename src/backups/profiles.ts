import type { Kysely } from 'kysely';
import type { Config } from '../config.js';
import type { DB } from '../db/types.js';
import type { Clock } from '../lib/clock.js';
import type { Settings } from '../settings/store.js';
import { lastRun, nextDueTime, type Scheduler } from '../tasks/scheduler.js';
import { listScheduledBackups } from './retention.js';

/** The contract's backup profiles: the site's own data, and the management node's. */
export const BACKUP_PROFILES = ['site', 'manager'] as const;
export type BackupProfile = (typeof BACKUP_PROFILES)[number];

/**
 * A profile's producer is a scheduled task named backup_{profile}. Its result object reports
 * `reached_bucket` (boolean: the sealed archive was uploaded to the off-site bucket) and
 * `recovery_key_fingerprint` (string: the recovery key the archive was sealed to). The site profile's
 * producer ships (tasks/backup-site.ts: local backups on backup_schedule_hours, kept to backup_keep); the
 * manager profile belongs to a management node and reports configured: false until one is registered.
 */
export function backupTaskName(profile: BackupProfile): string {
  return `backup_${profile}`;
}

export interface BackupProfileStatus {
  configured: boolean;
  scheduled: boolean;
  interval_seconds: number | null;
  last_run_time: Date | null;
  last_outcome: string | null;
  last_error: string | null;
  reached_bucket: boolean | null;
  recovery_key_fingerprint: string | null;
  /** backup_schedule_hours (0: off); null for a profile this node does not produce. */
  schedule_hours: number | null;
  /** backup_keep: how many scheduled backups are kept. */
  keep: number | null;
  /** The newest scheduled backup in this node's DATA_DIR/backups/scheduled (path as backups/list names it). */
  last_backup_path: string | null;
  last_backup_time: Date | null;
  last_backup_size_bytes: number | null;
  /** Scheduled backups present in this node's DATA_DIR/backups/scheduled. */
  kept_count: number | null;
  /** When the next backup is due (null: not scheduled); taken at the scheduler's next look after it. */
  next_due_time: Date | null;
}

/** What the site profile's schedule reads (the doors' Services satisfies it). */
interface ScheduleDeps {
  db: Kysely<DB>;
  clock: Clock;
  settings: Settings;
  config: Pick<Config, 'dataDir'>;
}

function resultField(result: unknown, name: string): unknown {
  return result !== null && typeof result === 'object' ? (result as Record<string, unknown>)[name] : undefined;
}

/** The site profile's schedule and the scheduled backups this node keeps. */
async function siteSchedule(
  services: ScheduleDeps,
): Promise<Pick<BackupProfileStatus, 'schedule_hours' | 'keep' | 'last_backup_path' | 'last_backup_time' | 'last_backup_size_bytes' | 'kept_count' | 'next_due_time'>> {
  const hours = services.settings.int('backup_schedule_hours');
  const [kept, last] = await Promise.all([listScheduledBackups(services.config.dataDir), lastRun(services.db, backupTaskName('site'))]);
  const now = services.clock.now();
  const due = nextDueTime(hours * 3600, last, now);
  const newest = kept[0];
  return {
    schedule_hours: hours,
    keep: services.settings.int('backup_keep'),
    last_backup_path: newest?.path ?? null,
    last_backup_time: newest?.time ?? null,
    last_backup_size_bytes: newest?.size_bytes ?? null,
    kept_count: kept.length,
    // Overdue (the scheduler has not looked yet) reads as due now.
    next_due_time: due && (due < now ? now : due),
  };
}

const NOT_PRODUCED_HERE = {
  schedule_hours: null,
  keep: null,
  last_backup_path: null,
  last_backup_time: null,
  last_backup_size_bytes: null,
  kept_count: null,
  next_due_time: null,
} as const;

export async function backupProfiles(
  services: ScheduleDeps & { scheduler: Pick<Scheduler, 'find'> },
): Promise<Record<BackupProfile, BackupProfileStatus>> {
  const names = BACKUP_PROFILES.map(backupTaskName);
  const rows = await services.db.selectFrom('tsk_task_runs').selectAll().where('tsk_name', 'in', names).execute();
  const out = {} as Record<BackupProfile, BackupProfileStatus>;
  for (const profile of BACKUP_PROFILES) {
    const task = services.scheduler.find(backupTaskName(profile));
    const run = rows.find((r) => r.tsk_name === backupTaskName(profile));
    const result = run?.tsk_last_result ?? null;
    const reached = resultField(result, 'reached_bucket');
    const fingerprint = resultField(result, 'recovery_key_fingerprint');
    // A producer with a period from settings is scheduled while that period is not 0.
    const everySeconds = task ? (task.periodSeconds ? task.periodSeconds() : task.intervalSeconds) : 0;
    out[profile] = {
      configured: task !== undefined,
      scheduled: everySeconds > 0,
      interval_seconds: task && everySeconds > 0 ? everySeconds : null,
      last_run_time: run?.tsk_last_start_time ?? null,
      last_outcome: run?.tsk_last_outcome ?? null,
      last_error: run?.tsk_last_error ?? null,
      // A failed run reached nothing; a run that did not say is unknown.
      reached_bucket: run && run.tsk_last_outcome !== 'success' ? false : typeof reached === 'boolean' ? reached : null,
      recovery_key_fingerprint: typeof fingerprint === 'string' ? fingerprint : null,
      ...(profile === 'site' && task ? await siteSchedule(services) : NOT_PRODUCED_HERE),
    };
  }
  return out;
}
