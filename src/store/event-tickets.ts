import { sql, type Kysely } from 'kysely';
import { closedReason, isFull, liveRegistrantCount, liveRegistration, loadEvent } from '../events/rules.js';
import type { DB } from '../db/types.js';
import { businessError } from '../http/errors.js';

/**
 * A paid event's place is its product (pro_evt_event_id): when an order holding such a product is paid,
 * the buyer is registered for the event, the registration pointing back to the order and its item.
 * Runs inside the transaction that marks the order paid; a user already registered keeps their one live
 * registration (the partial unique index is never tripped, so the transaction is not aborted).
 */
export async function registerPaidEvents(trx: Kysely<DB>, orderId: number, userId: number, now: Date): Promise<number> {
  const result = await sql<{ evr_event_registrant_id: number; evr_odi_order_item_id: number }>`
    insert into evr_event_registrants (evr_evt_event_id, evr_usr_user_id, evr_ord_order_id, evr_odi_order_item_id, evr_create_time, evr_update_time)
    select distinct on (pro_evt_event_id) pro_evt_event_id, ${userId}::int8, ${orderId}::int8, odi_order_item_id, ${now}::timestamp, ${now}::timestamp
    from odi_order_items
    join pro_products on pro_product_id = odi_pro_product_id
    join evt_events on evt_event_id = pro_evt_event_id and evt_delete_time is null
    where odi_ord_order_id = ${orderId}
      and not exists (
        select 1 from evr_event_registrants
        where evr_evt_event_id = pro_evt_event_id and evr_usr_user_id = ${userId} and evr_delete_time is null
      )
    order by pro_evt_event_id, odi_order_item_id
    returning evr_event_registrant_id, evr_odi_order_item_id`.execute(trx);
  for (const row of result.rows) {
    await trx
      .updateTable('odi_order_items')
      .set({ odi_evr_event_registrant_id: Number(row.evr_event_registrant_id) } as never)
      .where('odi_order_item_id', '=', Number(row.evr_odi_order_item_id))
      .execute();
  }
  return result.rows.length;
}

/**
 * Before taking payment for event places: each event sold in the cart must take signups now, have a place
 * left, and not already count the buyer. (Visibility and tier gates are the event's own; a place bought
 * while the last one is taken by a concurrent payment is still honoured at payment time.)
 */
export async function checkEventPlaces(db: Kysely<DB>, userId: number, productIds: number[], now: Date): Promise<void> {
  if (productIds.length === 0) return;
  const sold: Array<{ pro_evt_event_id: number }> = await (db as unknown as Kysely<any>)
    .selectFrom('pro_products')
    .select(['pro_evt_event_id'])
    .where('pro_product_id', 'in', productIds)
    .where('pro_evt_event_id', 'is not', null)
    .execute();
  for (const { pro_evt_event_id } of sold) {
    const event = await loadEvent(db, Number(pro_evt_event_id));
    if (!event) throw businessError('That event is not available');
    const closed = closedReason(event, now);
    if (closed) throw businessError(closed);
    if (await liveRegistration(db, event.evt_event_id, userId)) throw businessError(`You are already registered for ${event.evt_name}`);
    if (isFull(event, await liveRegistrantCount(db, event.evt_event_id))) throw businessError(`${event.evt_name} is full`);
  }
}
