import type { BackupTaker } from '../backups/take.js';
import type { Config } from '../config.js';
import type { Settings } from '../settings/store.js';
import type { StoreSystem } from '../store/index.js';
import type { WebSessions } from '../web/sessions.js';
import { backupSiteTask } from './backup-site.js';
import { purgeDriveChangesTask } from './purge-drive-changes.js';
import { purgeDriveUploadsTask } from './purge-drive-uploads.js';
import { sealDriveFolderNamesTask } from './seal-drive-folder-names.js';
import { reconcileDriveUsageTask } from './reconcile-drive-usage.js';
import { purgeIdempotencyKeysTask } from './purge-idempotency-keys.js';
import { purgeRequestLogsTask } from './purge-request-logs.js';
import { storeReconcileTask } from '../store/reconcile/task.js';
import { subscriptionPeriodEndTask } from './subscription-period-end.js';
import type { TaskDefinition } from './scheduler.js';

/** Every scheduled task; `gatehouse task run NAME|all` and the scheduler both read this list. */
export function allTasks(services: BackupTaker & { config: Config; settings: Settings; webSessions: WebSessions; store: StoreSystem }): TaskDefinition[] {
  return [
    purgeRequestLogsTask(services.settings),
    {
      name: 'purge_web_sessions',
      description: 'Delete website sessions that have expired, idled out or ended',
      intervalSeconds: 3600,
      run: async ({ db }) => ({ deleted: await services.webSessions.purge(db) }),
    },
    purgeIdempotencyKeysTask(services.settings),
    subscriptionPeriodEndTask(services.settings),
    storeReconcileTask(services),
    purgeDriveChangesTask,
    purgeDriveUploadsTask(services.config),
    reconcileDriveUsageTask(services.config),
    sealDriveFolderNamesTask,
    backupSiteTask(services),
  ];
}
