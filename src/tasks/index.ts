import type { Settings } from '../settings/store.js';
import { purgeIdempotencyKeysTask } from './purge-idempotency-keys.js';
import { purgeRequestLogsTask } from './purge-request-logs.js';
import type { TaskDefinition } from './scheduler.js';

/** Every scheduled task; `gatehouse task run NAME|all` and the scheduler both read this list. */
export function allTasks(services: { settings: Settings }): TaskDefinition[] {
  return [purgeRequestLogsTask(services.settings), purgeIdempotencyKeysTask(services.settings)];
}
