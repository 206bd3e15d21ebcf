import type { Kysely } from 'kysely';
import type { DB } from '../../db/types.js';
import type { Clock } from '../../lib/clock.js';
import { EMAIL_FOR_EVENT } from './templates.js';
import { queueMemberEmail } from './queue.js';

/** What fan-out reads of a recorded event (events.ts's RecordedEvent satisfies it; declared here, no import circle). */
export interface EventForEmails {
  id: string;
  type: string;
  rowId: number;
  /** The member the event is about: the recipient. */
  userId: number | null;
}

/**
 * The member email an event sends (EMAIL_FOR_EVENT), queued in the event's transaction: at most one per
 * (event, template, recipient), so fanning an event out again queues nothing new. Whether the template is
 * switched on is decided when it is sent (sender.ts), so switching one off also holds back what is queued.
 */
export async function fanOutEmails(trx: Kysely<DB>, clock: Clock, event: EventForEmails): Promise<void> {
  const template = Object.prototype.hasOwnProperty.call(EMAIL_FOR_EVENT, event.type) ? EMAIL_FOR_EVENT[event.type] : undefined;
  if (!template || event.userId === null) return;
  await queueMemberEmail(trx, clock, { source: event.id, template, userId: event.userId, eventRowId: event.rowId });
}
