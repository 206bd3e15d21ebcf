import { sealLeftoverFolderNames } from './sealed-files.js';
import type { TaskDefinition } from '../tasks/scheduler.js';

/**
 * Hourly: seals the names of sealed Drive folders still stored in clear from before folder names were
 * sealed (issue 35, migration 0032), to each owner's current vault key. After the first run there is
 * nothing left to do; a rename or a vault rotation seals such a name too.
 */
export const sealDriveFolderNamesTask: TaskDefinition = {
  name: 'seal_drive_folder_names',
  description: 'Seal the names of sealed Drive folders still stored in clear (from before folder names were sealed)',
  intervalSeconds: 3600,
  async run({ db }) {
    return { sealed: await sealLeftoverFolderNames(db) };
  },
};
