import type { Kysely } from 'kysely';
import type { DB } from '../../db/types.js';
import type { Clock } from '../../lib/clock.js';
import type { RecordedEvent } from '../events.js';
import { EMAIL_FOR_EVENT } from './templates.js';
import { queueMemberEmail } from './queue.js';

/**
 * The member email an event sends (EMAIL_FOR_EVENT), queued in the event's transaction: at most one per
 * (event, template, recipient), so fanning an event out again queues nothing new. Whether the template is
 * switched on is decided when it is sent (sender.ts), so switching one off also holds back what is queued.
 */
export async function fanOutEmails(trx: Kysely<DB>, clock: Clock, event: RecordedEvent): Promise<void> {
  const template = EMAIL_FOR_EVENT[event.type];
  if (!template || event.userId === null) return;
  await queueMemberEmail(trx, clock, { source: event.id, template, userId: event.userId, eventRowId: event.rowId });
}
