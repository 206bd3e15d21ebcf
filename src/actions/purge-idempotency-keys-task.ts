import { IdempotencyStore } from './idempotency.js';
import type { Settings } from '../settings/store.js';
import type { TaskDefinition } from '../tasks/scheduler.js';

export function purgeIdempotencyKeysTask(settings: Settings): TaskDefinition {
  return {
    name: 'purge_idempotency_keys',
    description: 'Delete idempotency records older than idempotency_key_retention_hours',
    intervalSeconds: 3600,
    async run({ db, clock }) {
      const hours = settings.int('idempotency_key_retention_hours');
      const deleted = await new IdempotencyStore(db, clock).purgeOlderThan(new Date(clock.nowMs() - hours * 3_600_000));
      return { deleted, retention_hours: hours };
    },
  };
}
