import type { BackupTaker } from '../backups/take.js';
import type { Config } from '../config.js';
import type { DriveStorage } from '../drive/storage.js';
import type { Settings } from '../settings/store.js';
import type { StoreSystem } from '../store/index.js';
import type { WebSessions } from '../accounts/web-sessions.js';
import { backupSiteTask } from '../backups/task.js';
import { purgeDriveChangesTask } from '../drive/purge-changes-task.js';
import { purgeDriveUploadsTask } from '../drive/uploads/purge-task.js';
import { sealDriveFolderNamesTask } from '../drive/seal-folder-names-task.js';
import { reconcileDriveUsageTask } from '../drive/reconcile-usage-task.js';
import { purgeIdempotencyKeysTask } from '../actions/purge-idempotency-keys-task.js';
import { memberImportTask } from '../actions/members/import-task.js';
import type { MemberImportServices } from '../actions/members/import-shared.js';
import { purgeRequestLogsTask } from '../http/purge-request-logs-task.js';
import { storeReconcileTask } from '../store/reconcile/task.js';
import { subscriptionPeriodEndTask } from '../store/lifecycle/period-end-task.js';
import { postPublicationTask } from '../models/post-publication.js';
import { renewalReminderTask } from '../outbound/emails/renewal-reminder-task.js';
import type { TaskDefinition } from '../tasks/scheduler.js';
import { purgeWebhookAttemptsTask } from '../outbound/webhooks/purge-task.js';

/** Every scheduled task; `gatehouse task run NAME|all` and the scheduler both read this list. */
export function allTasks(services: BackupTaker & MemberImportServices & { config: Config; settings: Settings; webSessions: WebSessions; store: StoreSystem; driveStorage: DriveStorage }): TaskDefinition[] {
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
    postPublicationTask,
    renewalReminderTask(services.settings),
    storeReconcileTask(services),
    purgeDriveChangesTask,
    purgeDriveUploadsTask(services.driveStorage),
    reconcileDriveUsageTask(services.driveStorage),
    sealDriveFolderNamesTask,
    backupSiteTask(services),
    purgeWebhookAttemptsTask,
    memberImportTask(services),
  ];
}
