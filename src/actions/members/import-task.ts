import type { TaskDefinition } from '../../tasks/scheduler.js';
import { memberImportRunner, type MemberImportServices } from './import-shared.js';

/**
 * Picks up member import jobs (DESIGN 16) that member_import_run queued, and any whose runner stopped
 * (a restart): each is claimed and started in the background on this node, so the task itself ends at
 * once and never holds its connection while a job runs.
 */
export function memberImportTask(services: MemberImportServices): TaskDefinition {
  const runner = memberImportRunner(services);
  return {
    name: 'member_import',
    description: 'Start member import jobs waiting for a runner',
    intervalSeconds: 5,
    async run({ db }) {
      return { started: await runner.startWaiting(db) };
    },
  };
}
