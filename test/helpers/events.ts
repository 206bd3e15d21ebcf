import { workflowTables } from '../../src/events/tables.js';
import type { TestApp } from './app.js';

let seq = 0;

export interface EventFields {
  evt_name?: string;
  evt_is_accepting_signups?: boolean | null;
  evt_status?: number | null;
  evt_visibility?: number | null;
  evt_max_signups?: number | null;
  evt_allow_waiting_list?: boolean | null;
  evt_session_display_type?: number | null;
  evt_end_time?: Date | null;
  evt_tier_min_level?: number | null;
  evt_delete_time?: Date | null;
}

/** An event open for signups unless told otherwise. */
export async function createEvent(t: TestApp, f: EventFields = {}): Promise<number> {
  const row = await workflowTables(t.services.db)
    .insertInto('evt_events')
    .values({ evt_name: `Event ${++seq}`, evt_is_accepting_signups: true, ...f })
    .returning('evt_event_id')
    .executeTakeFirstOrThrow();
  return row.evt_event_id;
}

export async function createSession(t: TestApp, eventId: number, order: number, f: { evs_delete_time?: Date } = {}): Promise<number> {
  const row = await workflowTables(t.services.db)
    .insertInto('evs_event_sessions')
    .values({ evs_evt_event_id: eventId, evs_title: `Session ${order}`, evs_order: order, ...f })
    .returning('evs_event_session_id')
    .executeTakeFirstOrThrow();
  return row.evs_event_session_id;
}

export async function createEventProduct(t: TestApp, eventId: number, name: string): Promise<number> {
  const row = await (t.services.db as any)
    .insertInto('pro_products')
    .values({ pro_name: name, pro_link: `p-${++seq}`, pro_evt_event_id: eventId, pro_is_active: true })
    .returning('pro_product_id')
    .executeTakeFirstOrThrow();
  return Number(row.pro_product_id);
}

export function liveRegistrations(t: TestApp, eventId: number) {
  return workflowTables(t.services.db)
    .selectFrom('evr_event_registrants')
    .select(['evr_event_registrant_id', 'evr_usr_user_id'])
    .where('evr_evt_event_id', '=', eventId)
    .where('evr_delete_time', 'is', null)
    .orderBy('evr_event_registrant_id')
    .execute();
}

export function liveWaitingList(t: TestApp, eventId: number) {
  return workflowTables(t.services.db)
    .selectFrom('ewl_waiting_lists')
    .select(['ewl_waiting_list_id', 'ewl_usr_user_id'])
    .where('ewl_evt_event_id', '=', eventId)
    .where('ewl_delete_time', 'is', null)
    .orderBy('ewl_waiting_list_id')
    .execute();
}
