import type { Kysely } from 'kysely';
import type { DB } from '../db/types.js';
import { businessError } from '../http/errors.js';
import { isStaff, visibleEvent, type EventContext, type EventRow, type EventViewer } from './rules.js';
import { workflowTables } from './tables.js';

/** evt_session_display_type 2: a course, taken as a whole (every session); other values let sessions be picked. */
export const SESSION_DISPLAY_COURSE = 2;

export const isCourse = (event: EventRow) => event.evt_session_display_type === SESSION_DISPLAY_COURSE;

export interface Registration {
  evr_event_registrant_id: number;
  evr_usr_user_id: number;
  event: EventRow;
}

/**
 * A live registration the acting user may choose sessions for (their own, or any for staff), with its
 * event locked for the transaction (unless a form is only reading). Someone else's registration answers like a missing one.
 */
export async function registrationForSessions(ctx: EventContext, registrantId: number, lock = true): Promise<Registration> {
  const found = await workflowTables(ctx.db)
    .selectFrom('evr_event_registrants')
    .select(['evr_event_registrant_id', 'evr_evt_event_id', 'evr_usr_user_id'])
    .where('evr_event_registrant_id', '=', registrantId)
    .where('evr_delete_time', 'is', null)
    .executeTakeFirst();
  if (!found || (found.evr_usr_user_id !== ctx.user.usr_user_id && !isStaff(ctx.user))) {
    throw businessError('No such registration of yours', { evr_event_registrant_id: registrantId });
  }
  const event = await visibleEvent(ctx, found.evr_evt_event_id, lock);
  return { evr_event_registrant_id: found.evr_event_registrant_id, evr_usr_user_id: found.evr_usr_user_id, event };
}

export interface SessionSummary {
  session_id: number;
  title: string | null;
  start_time: Date | null;
}

/** The event's live sessions, in programme order. */
export async function eventSessions(db: Kysely<DB>, eventId: number): Promise<SessionSummary[]> {
  const rows = await workflowTables(db)
    .selectFrom('evs_event_sessions')
    .select(['evs_event_session_id', 'evs_title', 'evs_start_time'])
    .where('evs_evt_event_id', '=', eventId)
    .where('evs_delete_time', 'is', null)
    .orderBy('evs_order')
    .orderBy('evs_session_number')
    .orderBy('evs_start_time')
    .orderBy('evs_event_session_id')
    .execute();
  return rows.map((r) => ({ session_id: r.evs_event_session_id, title: r.evs_title, start_time: r.evs_start_time }));
}

/** Makes the registration's chosen sessions exactly `sessionIds` (which the caller has checked). */
export async function replaceSessionChoice(db: Kysely<DB>, registrantId: number, sessionIds: number[], now: Date): Promise<void> {
  const w = workflowTables(db);
  await w.deleteFrom('ers_event_registrant_sessions').where('ers_evr_event_registrant_id', '=', registrantId).execute();
  if (sessionIds.length === 0) return;
  await w
    .insertInto('ers_event_registrant_sessions')
    .values(sessionIds.map((id) => ({ ers_evr_event_registrant_id: registrantId, ers_evs_event_session_id: id, ers_create_time: now })))
    .execute();
}

/** The registration's chosen session ids, in programme order. */
export async function chosenSessionIds(db: Kysely<DB>, registrantId: number): Promise<number[]> {
  const rows = await workflowTables(db)
    .selectFrom('ers_event_registrant_sessions')
    .innerJoin('evs_event_sessions', 'evs_event_session_id', 'ers_evs_event_session_id')
    .select('ers_evs_event_session_id')
    .where('ers_evr_event_registrant_id', '=', registrantId)
    .orderBy('evs_order')
    .orderBy('evs_session_number')
    .orderBy('evs_start_time')
    .orderBy('evs_event_session_id')
    .execute();
  return rows.map((r) => r.ers_evs_event_session_id);
}

/** The registration a sessions form is for (?evr_event_registrant_id=), read without locking. */
export async function formRegistration(ctx: Omit<EventContext, 'user'> & { user: EventViewer | null }, raw: string | undefined): Promise<Registration> {
  const id = /^\d{1,15}$/.test(raw ?? '') ? Number(raw) : 0;
  return registrationForSessions({ ...ctx, user: ctx.user ?? { usr_user_id: 0, usr_permission: 0 } }, id, false);
}
