import path from 'node:path';
import { backupsDir } from './paths.js';
import { backupTaskName } from './profiles.js';
import { SCHEDULED_FOLDER, listScheduledBackups, pruneScheduledBackups } from './retention.js';
import { takeBackup, type BackupTaker } from './take.js';
import type { Settings } from '../settings/store.js';
import type { TaskDefinition } from '../tasks/scheduler.js';

// How often the scheduler looks whether a backup is due: a backup starts at most this late.
const CHECK_SECONDS = 300;

/**
 * The site profile's producer: every backup_schedule_hours (0: off) a backup into
 * DATA_DIR/backups/scheduled, then the scheduled backups beyond the newest backup_keep are deleted. Due
 * by the last recorded run in the database, so that with several nodes one backup is taken per period
 * (on the node that wins the task's lock). The file stays in DATA_DIR: it reaches no off-site bucket and
 * is sealed to no recovery key.
 */
export function backupSiteTask(services: BackupTaker & { settings: Settings }): TaskDefinition {
  const { settings, config } = services;
  return {
    name: backupTaskName('site'),
    description: 'Back up the database into DATA_DIR/backups/scheduled every backup_schedule_hours, keeping the newest backup_keep',
    intervalSeconds: CHECK_SECONDS,
    periodSeconds: () => settings.int('backup_schedule_hours') * 3600,
    async run({ db, clock }) {
      const backup = await takeBackup({ ...services, clock }, SCHEDULED_FOLDER, () => {}, db);
      const pruned = await pruneScheduledBackups(config.dataDir, settings.int('backup_keep'));
      const kept = await listScheduledBackups(config.dataDir);
      return {
        file: path.relative(backupsDir(config.dataDir), backup.path).split(path.sep).join('/'),
        size_bytes: backup.size_bytes,
        kept: kept.length,
        pruned,
        reached_bucket: false,
        recovery_key_fingerprint: null,
      };
    },
  };
}
