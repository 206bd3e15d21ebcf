import type { Kysely } from 'kysely';
import type { DB } from '../db/types.js';
import type { MailMessage } from '../mail/mailer.js';
import { eventProduct, isFull, liveRegistrantCount, type EventRow } from './rules.js';
import { workflowTables } from './tables.js';

export interface Promotion {
  user_id: number;
  event_registrant_id: number;
}

/**
 * Gives a freed place to the first person on the event's waiting list (oldest entry first): their entry
 * is closed and a registration made in the same transaction, and they are told by mail. Paid events keep
 * their list (a place there is bought through the store); a full event promotes nobody. The caller holds
 * the event row's lock.
 */
export async function promoteFromWaitingList(db: Kysely<DB>, event: EventRow, now: Date, mail: (m: MailMessage) => void): Promise<Promotion | null> {
  if (event.evt_allow_waiting_list !== true) return null;
  if (isFull(event, await liveRegistrantCount(db, event.evt_event_id))) return null;
  if (await eventProduct(db, event.evt_event_id)) return null;
  const w = workflowTables(db);
  // Someone on the list who registered since (a place freed earlier) is skipped and their entry closed.
  for (;;) {
    const first = await w
      .selectFrom('ewl_waiting_lists')
      .innerJoin('usr_users', 'usr_user_id', 'ewl_usr_user_id')
      .select(['ewl_waiting_list_id', 'ewl_usr_user_id', 'usr_email', 'usr_delete_time'])
      .where('ewl_evt_event_id', '=', event.evt_event_id)
      .where('ewl_delete_time', 'is', null)
      .orderBy('ewl_create_time')
      .orderBy('ewl_waiting_list_id')
      .limit(1)
      .executeTakeFirst();
    if (!first) return null;
    await w.updateTable('ewl_waiting_lists').set({ ewl_delete_time: now, ewl_update_time: now }).where('ewl_waiting_list_id', '=', first.ewl_waiting_list_id).execute();
    if (first.usr_delete_time !== null) continue;
    const already = await w
      .selectFrom('evr_event_registrants')
      .select('evr_event_registrant_id')
      .where('evr_evt_event_id', '=', event.evt_event_id)
      .where('evr_usr_user_id', '=', first.ewl_usr_user_id)
      .where('evr_delete_time', 'is', null)
      .executeTakeFirst();
    if (already) continue;
    const made = await w
      .insertInto('evr_event_registrants')
      .values({ evr_evt_event_id: event.evt_event_id, evr_usr_user_id: first.ewl_usr_user_id, evr_create_time: now, evr_update_time: now })
      .returning('evr_event_registrant_id')
      .executeTakeFirstOrThrow();
    mail({
      to: first.usr_email,
      subject: `You have a place at ${event.evt_name}`,
      text: `A place at ${event.evt_name} became free and it is yours: you were first on the waiting list and are now registered.`,
      template: 'event_waiting_list_promoted',
    });
    return { user_id: first.ewl_usr_user_id, event_registrant_id: made.evr_event_registrant_id };
  }
}
