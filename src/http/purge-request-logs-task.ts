import type { Settings } from '../settings/store.js';
import type { TaskDefinition } from '../tasks/scheduler.js';

export function purgeRequestLogsTask(settings: Settings): TaskDefinition {
  return {
    name: 'purge_request_logs',
    description: 'Delete request log rows older than api_request_log_retention_days',
    intervalSeconds: 3600,
    async run({ db, clock }) {
      const days = settings.int('api_request_log_retention_days');
      const cutoff = new Date(clock.nowMs() - days * 86_400_000);
      const result = await db.deleteFrom('rql_request_logs').where('rql_create_time', '<', cutoff).executeTakeFirst();
      return { deleted: Number(result.numDeletedRows), retention_days: days };
    },
  };
}
