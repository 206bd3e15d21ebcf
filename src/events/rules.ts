import type { Kysely, Selectable } from 'kysely';
import type { DB } from '../db/types.js';
import { businessError } from '../http/errors.js';
import type { Clock } from '../lib/clock.js';
import { Event } from '../models/event.js';
import type { ModelCaches, Row } from '../models/define.js';
import type { Settings } from '../settings/store.js';
import { TierGate } from '../models/gate.js';
import { STAFF_PERMISSION } from '../tiers/gating.js';
import { workflowTables, type EventsTable } from './tables.js';

export type EventRow = Selectable<EventsTable> & Row;

/** evt_visibility 0: a private event, seen (and joined) by staff only. Other values are visible. */
export const VISIBILITY_PRIVATE = 0;
/** evt_status 1 is a running event; any other status (completed, cancelled) takes no signups. */
export const STATUS_ACTIVE = 1;

/** Who is acting or looking: enough of the user for the visibility and ownership rules. */
export interface EventViewer {
  usr_user_id: number;
  usr_permission: number;
}

export const isStaff = (user: EventViewer) => user.usr_permission >= STAFF_PERMISSION;

/** A form builder's user row as an event viewer. */
export const formViewer = (user: { usr_user_id: number; usr_permission?: unknown } | null): EventViewer | null =>
  user ? { usr_user_id: Number(user.usr_user_id), usr_permission: Number(user.usr_permission ?? 0) } : null;

export interface EventContext {
  db: Kysely<DB>;
  clock: Clock;
  settings: Settings;
  user: EventViewer;
  /** The server's read caches, for the tier gate's reads (none: from the database). */
  caches?: ModelCaches;
}

/** The event row, locked for this transaction when `lock` (capacity decisions are made under the lock). */
export async function loadEvent(db: Kysely<DB>, eventId: number, lock = false): Promise<EventRow | undefined> {
  let q = workflowTables(db).selectFrom('evt_events').selectAll().where('evt_event_id', '=', eventId);
  if (lock) q = q.forUpdate();
  return (await q.executeTakeFirst()) as EventRow | undefined;
}

/** A tier gate for one viewer; reuse it across the events of one request (it reads the tier once). */
export function viewerGate(ctx: Omit<EventContext, 'user'>, viewer: EventViewer): TierGate {
  return new TierGate(ctx.db, ctx.settings, ctx.clock, { userId: viewer.usr_user_id, permission: viewer.usr_permission }, ctx.caches);
}

/** Whether the viewer may see the event at all: not deleted, not private (staff excepted), and the tier gate. */
export async function eventVisibleTo(gate: TierGate, event: EventRow): Promise<boolean> {
  if (event.evt_delete_time !== null) return false;
  if (event.evt_visibility === VISIBILITY_PRIVATE && !gate.isStaff) return false;
  // The one tier-gating call site of the event workflows.
  return (await gate.check(Event, event)).allowed;
}

/**
 * The event as the acting user may act on it, or the 422 every event action gives for an event that
 * does not exist, is deleted, or is hidden from the user (one message, so hidden events stay hidden).
 */
export async function visibleEvent(ctx: EventContext, eventId: number, lock = false): Promise<EventRow> {
  const event = await loadEvent(ctx.db, eventId, lock);
  if (!event || !(await eventVisibleTo(viewerGate(ctx, ctx.user), event))) throw businessError('That event is not available', { evt_event_id: eventId });
  return event;
}

/** Why the event takes no signups now, or null when it does. */
export function closedReason(event: EventRow, now: Date): string | null {
  if (event.evt_is_accepting_signups !== true) return `${event.evt_name} is not accepting registrations`;
  if (event.evt_status !== null && event.evt_status !== STATUS_ACTIVE) return `${event.evt_name} is no longer open`;
  if (event.evt_end_time !== null && event.evt_end_time.getTime() <= now.getTime()) return `${event.evt_name} has already ended`;
  return null;
}

export async function liveRegistrantCount(db: Kysely<DB>, eventId: number): Promise<number> {
  const row = await workflowTables(db)
    .selectFrom('evr_event_registrants')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .where('evr_evt_event_id', '=', eventId)
    .where('evr_delete_time', 'is', null)
    .executeTakeFirstOrThrow();
  return Number(row.n);
}

export function isFull(event: EventRow, registrants: number): boolean {
  return event.evt_max_signups !== null && event.evt_max_signups > 0 && registrants >= event.evt_max_signups;
}

export async function liveRegistration(db: Kysely<DB>, eventId: number, userId: number) {
  return workflowTables(db)
    .selectFrom('evr_event_registrants')
    .select(['evr_event_registrant_id'])
    .where('evr_evt_event_id', '=', eventId)
    .where('evr_usr_user_id', '=', userId)
    .where('evr_delete_time', 'is', null)
    .executeTakeFirst();
}

/**
 * The product that sells places at the event (pro_evt_event_id), if the event is paid. A product taken off
 * sale still makes the event paid: it is not thereby free.
 */
export async function eventProduct(db: Kysely<DB>, eventId: number) {
  return workflowTables(db)
    .selectFrom('pro_products')
    .select(['pro_product_id', 'pro_name'])
    .where('pro_evt_event_id', '=', eventId)
    .where('pro_delete_time', 'is', null)
    .orderBy('pro_product_id')
    .executeTakeFirst();
}

const FORM_EVENT_LIMIT = 200;

/** Events taking signups now, soonest first (what a registration form offers, before visibility). */
export async function openEvents(db: Kysely<DB>, now: Date): Promise<EventRow[]> {
  const rows = await workflowTables(db)
    .selectFrom('evt_events')
    .selectAll()
    .where('evt_delete_time', 'is', null)
    .where('evt_is_accepting_signups', '=', true)
    .where((eb) => eb.or([eb('evt_status', 'is', null), eb('evt_status', '=', STATUS_ACTIVE)]))
    .where((eb) => eb.or([eb('evt_end_time', 'is', null), eb('evt_end_time', '>', now)]))
    .orderBy('evt_start_time')
    .orderBy('evt_event_id')
    .limit(FORM_EVENT_LIMIT)
    .execute();
  return rows as EventRow[];
}
