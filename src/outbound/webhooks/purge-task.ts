import type { TaskDefinition } from '../../tasks/scheduler.js';

/** How long the webhook attempt log is kept (DESIGN 15). */
export const ATTEMPT_RETENTION_DAYS = 30;

export const purgeWebhookAttemptsTask: TaskDefinition = {
  name: 'purge_webhook_attempts',
  description: `Delete webhook delivery attempts older than ${ATTEMPT_RETENTION_DAYS} days`,
  intervalSeconds: 3600,
  async run({ db, clock }) {
    const cutoff = new Date(clock.nowMs() - ATTEMPT_RETENTION_DAYS * 86400 * 1000);
    const res = await db.deleteFrom('wha_webhook_attempts').where('wha_attempt_time', '<', cutoff).executeTakeFirst();
    return { deleted: Number(res.numDeletedRows) };
  },
};
