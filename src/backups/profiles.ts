import type { Services } from '../services.js';

/** The contract's backup profiles: the site's own data, and the management node's. */
export const BACKUP_PROFILES = ['site', 'manager'] as const;
export type BackupProfile = (typeof BACKUP_PROFILES)[number];

/**
 * A profile's producer is a scheduled task named backup_{profile}. Its result object reports
 * `reached_bucket` (boolean: the sealed archive was uploaded to the off-site bucket) and
 * `recovery_key_fingerprint` (string: the recovery key the archive was sealed to). No producer ships yet,
 * so both profiles report configured: false until one is registered.
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
}

function resultField(result: unknown, name: string): unknown {
  return result !== null && typeof result === 'object' ? (result as Record<string, unknown>)[name] : undefined;
}

export async function backupProfiles(services: Pick<Services, 'db' | 'scheduler'>): Promise<Record<BackupProfile, BackupProfileStatus>> {
  const names = BACKUP_PROFILES.map(backupTaskName);
  const rows = await services.db.selectFrom('tsk_task_runs').selectAll().where('tsk_name', 'in', names).execute();
  const out = {} as Record<BackupProfile, BackupProfileStatus>;
  for (const profile of BACKUP_PROFILES) {
    const task = services.scheduler.find(backupTaskName(profile));
    const run = rows.find((r) => r.tsk_name === backupTaskName(profile));
    const result = run?.tsk_last_result ?? null;
    const reached = resultField(result, 'reached_bucket');
    const fingerprint = resultField(result, 'recovery_key_fingerprint');
    out[profile] = {
      configured: task !== undefined,
      scheduled: task !== undefined && task.intervalSeconds > 0,
      interval_seconds: task?.intervalSeconds ?? null,
      last_run_time: run?.tsk_last_start_time ?? null,
      last_outcome: run?.tsk_last_outcome ?? null,
      last_error: run?.tsk_last_error ?? null,
      // A failed run reached nothing; a run that did not say is unknown.
      reached_bucket: run && run.tsk_last_outcome !== 'success' ? false : typeof reached === 'boolean' ? reached : null,
      recovery_key_fingerprint: typeof fingerprint === 'string' ? fingerprint : null,
    };
  }
  return out;
}
