import type { Kysely } from 'kysely';
import type { DB } from '../../db/types.js';
import type { Clock } from '../../lib/clock.js';
import type { MemberEmailKey } from './templates.js';

export interface QueuedEmail {
  /** The outbound event's uid, or a key of the source's own (`renewal:{order item}:{period end}`). */
  source: string;
  template: MemberEmailKey;
  userId: number;
  /** The event the placeholders are read from. */
  eventRowId?: number;
  /** Placeholder values of an email without an event. */
  data?: Record<string, string>;
}

/**
 * Queues one member email, due at once, to the member's current address; nothing when that (source,
 * template, recipient) is queued already or the member is gone. True when a row was written.
 */
export async function queueMemberEmail(db: Kysely<DB>, clock: Clock, email: QueuedEmail): Promise<boolean> {
  const user = await db
    .selectFrom('usr_users')
    .select('usr_email')
    .where('usr_user_id', '=', email.userId)
    .where('usr_delete_time', 'is', null)
    .executeTakeFirst();
  if (!user) return false;
  const now = clock.now();
  const written = await db
    .insertInto('mem_member_emails')
    .values({
      mem_source: email.source,
      mem_template: email.template,
      mem_usr_user_id: email.userId,
      mem_to: user.usr_email,
      mem_obe_outbound_event_id: email.eventRowId ?? null,
      mem_data: email.data ? JSON.stringify(email.data) : null,
      mem_next_attempt_time: now,
      mem_create_time: now,
    })
    .onConflict((oc) => oc.columns(['mem_source', 'mem_template', 'mem_usr_user_id']).doNothing())
    .returning('mem_member_email_id')
    .executeTakeFirst();
  return written !== undefined;
}
