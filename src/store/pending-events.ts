import type { Kysely } from 'kysely';
import type { DB, PaymentSource } from '../db/types.js';
import type { StoreEvent } from './events.js';

/**
 * Events that name a subscription we have not seen yet (DESIGN 13): a removal or status change that
 * arrives before its purchase is kept under every provider reference it gives, and applied when a
 * purchase naming one of them arrives. Nothing here decides what an event does; the processor does.
 */

const MAX_REFERENCE = 255;

/** Every way an event names its subscription or payment: the subscription reference, invoice, payment intent. */
export function eventReferences(ev: StoreEvent): string[] {
  const refs = [ev.reference, ev.lookup?.invoiceId, ev.lookup?.paymentIntentId, ev.payment?.invoiceId, ev.payment?.paymentIntentId];
  return [...new Set(refs.filter((r): r is string => typeof r === 'string' && r !== '').map((r) => r.slice(0, MAX_REFERENCE)))];
}

/** The event as stored: JSON with its times as ISO strings. */
function serialise(ev: StoreEvent): string {
  return JSON.stringify(ev);
}

function revive(raw: unknown): StoreEvent {
  const ev = (typeof raw === 'string' ? JSON.parse(raw) : raw) as StoreEvent & { eventTime: string; periodEnd: string | null; graceUntil?: string | null; resumeTime?: string | null };
  const date = (v: string | null | undefined) => (v === null || v === undefined ? null : new Date(v));
  return {
    ...ev,
    eventTime: new Date(ev.eventTime),
    periodEnd: date(ev.periodEnd),
    ...(ev.graceUntil !== undefined ? { graceUntil: date(ev.graceUntil) } : {}),
    ...(ev.resumeTime !== undefined ? { resumeTime: date(ev.resumeTime) } : {}),
  };
}

/** Keeps an event until its purchase arrives, under the references it returns (none: nothing to wait for). */
export async function keepPendingEvent(trx: Kysely<DB>, webhookLogId: number, ev: StoreEvent, at: Date): Promise<string[]> {
  const refs = eventReferences(ev);
  if (refs.length === 0) return [];
  const event = serialise(ev);
  await trx
    .insertInto('spe_store_pending_events')
    .values(
      refs.map((reference) => ({
        spe_wbh_webhook_log_id: webhookLogId,
        spe_source: ev.source,
        spe_reference: reference,
        spe_event: event,
        spe_event_time: ev.eventTime,
        spe_create_time: at,
      })),
    )
    .execute();
  return refs;
}

export interface PendingEvent {
  webhookLogId: number;
  /** The provider's event id. */
  eventId: string;
  event: StoreEvent;
}

/**
 * The events still waiting for a purchase with any of these references, one per delivery, oldest
 * provider time first. Their rows are locked: a concurrent purchase with the same reference waits.
 */
export async function openPendingEvents(trx: Kysely<DB>, source: PaymentSource, references: string[]): Promise<PendingEvent[]> {
  if (references.length === 0) return [];
  const rows = await trx
    .selectFrom('spe_store_pending_events')
    .innerJoin('wbh_webhook_logs', 'wbh_webhook_log_id', 'spe_wbh_webhook_log_id')
    .select(['spe_wbh_webhook_log_id', 'spe_event', 'spe_event_time', 'wbh_event_id'])
    .where('spe_source', '=', source)
    .where('spe_reference', 'in', references)
    .where('spe_applied_time', 'is', null)
    .orderBy('spe_event_time')
    .orderBy('spe_store_pending_event_id')
    .forUpdate()
    .execute();
  const byLog = new Map<number, PendingEvent>();
  for (const r of rows) {
    const id = Number(r.spe_wbh_webhook_log_id);
    if (!byLog.has(id)) byLog.set(id, { webhookLogId: id, eventId: r.wbh_event_id, event: revive(r.spe_event) });
  }
  return [...byLog.values()];
}

/** Marks a delivery's pending event applied (under all its references) to the order item its purchase made. */
export async function markPendingApplied(trx: Kysely<DB>, webhookLogId: number, orderItemId: number, at: Date): Promise<void> {
  await trx
    .updateTable('spe_store_pending_events')
    .set({ spe_applied_time: at, spe_odi_order_item_id: orderItemId })
    .where('spe_wbh_webhook_log_id', '=', webhookLogId)
    .where('spe_applied_time', 'is', null)
    .execute();
}
