import type { Kysely } from 'kysely';
import type { DB } from '../../db/types.js';
import type { Clock } from '../../lib/clock.js';
import { EMAIL_FOR_EVENT, type MemberEmailKey } from './templates.js';
import { queueMemberEmail } from './queue.js';
import { decodeSettingValue, settingDefinition } from '../../settings/registry.js';

/** What fan-out reads of a recorded event (events.ts's RecordedEvent satisfies it; declared here, no import circle). */
export interface EventForEmails {
  id: string;
  type: string;
  rowId: number;
  /** The member the event is about: the recipient. */
  userId: number | null;
}

/** The member email an event of this type, about this member (or none), sends, if any: its template and recipient. */
function memberEmailOf(type: string, userId: number | null): { template: MemberEmailKey; userId: number } | null {
  const template = Object.prototype.hasOwnProperty.call(EMAIL_FOR_EVENT, type) ? EMAIL_FOR_EVENT[type] : undefined;
  return template === undefined || userId === null ? null : { template, userId };
}

/** Whether an event of this type, about this member (or none), may queue a member email. */
export function mayQueueEmail(type: string, userId: number | null): boolean {
  return memberEmailOf(type, userId) !== null;
}

/**
 * The member email an event sends (EMAIL_FOR_EVENT), queued in the event's transaction: at most one per
 * (event, template, recipient), so fanning an event out again queues nothing new. Whether the template is
 * switched on is decided when it is sent (sender.ts), so switching one off also holds back what is queued.
 */
export async function fanOutEmails(trx: Kysely<DB>, clock: Clock, event: EventForEmails): Promise<void> {
  const email = memberEmailOf(event.type, event.userId);
  if (!email) return;
  const { template, userId } = email;
  // A member created while welcomes are off is never welcomed: nothing is queued (an import of many
  // members leaves no rows behind). Read in the transaction, so a node's stale memory cannot decide it.
  if (template === 'welcome' && !(await welcomesOn(trx))) return;
  await queueMemberEmail(trx, clock, { source: event.id, template, userId, eventRowId: event.rowId });
}

async function welcomesOn(trx: Kysely<DB>): Promise<boolean> {
  const def = settingDefinition('email_welcome_active');
  if (!def) return false;
  const row = await trx.selectFrom('stg_settings').select('stg_value').where('stg_name', '=', def.name).executeTakeFirst();
  return decodeSettingValue(def, row?.stg_value ?? null) === true;
}
