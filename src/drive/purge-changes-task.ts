import { DRIVE_CHANGE_RETENTION_DAYS, purgeDriveChanges } from './changes-feed.js';
import type { TaskDefinition } from '../tasks/scheduler.js';

/** The Drive change feed keeps 90 days; a cursor older than that is answered with reset: true. */
export const purgeDriveChangesTask: TaskDefinition = {
  name: 'purge_drive_changes',
  description: `Delete Drive change-feed entries older than ${DRIVE_CHANGE_RETENTION_DAYS} days`,
  intervalSeconds: 86_400,
  async run({ db, clock }) {
    return { deleted: await purgeDriveChanges(db, clock.now()), retention_days: DRIVE_CHANGE_RETENTION_DAYS };
  },
};
