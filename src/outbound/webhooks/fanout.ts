import { sql, type Kysely, type RawBuilder } from 'kysely';
import type { DB } from '../../db/types.js';
import type { Clock } from '../../lib/clock.js';

/** The event row as recordEvent writes it. */
export interface EventRowValues {
  uid: string;
  type: string;
  userId: number | null;
  payload: string;
  now: Date;
}

/**
 * Writes an event's row and, in the same statement, one delivery per enabled endpoint whose filter takes
 * its type (an empty filter takes every type), due at once; the caller's transaction holds both. One
 * statement where there were two: every write that records an event paid a second round trip for a
 * fan-out that, on most sites, inserts nothing. A `test` event goes only to the endpoint it tests
 * (webhook_endpoint_test), so it fans out to none here. Resolves with the event row's id.
 */
export async function insertEventWithDeliveries(trx: Kysely<DB>, clock: Clock, e: EventRowValues): Promise<number> {
  const r = await eventWithDeliveries(clock, e).execute(trx);
  return Number(r.rows[0]!.obe_outbound_event_id);
}

/** The statement insertEventWithDeliveries runs (also run as a deferred write, when no one needs the row's id). */
export function eventWithDeliveries(clock: Clock, e: EventRowValues): RawBuilder<{ obe_outbound_event_id: number | string }> {
  const now = clock.now();
  const fanOut: RawBuilder<unknown> =
    e.type === 'test'
      ? sql``
      : sql`, fanned as (
          insert into whd_webhook_deliveries (whd_obe_outbound_event_id, whd_whe_webhook_endpoint_id, whd_next_attempt_time, whd_create_time, whd_update_time)
          select event.obe_outbound_event_id, whe_webhook_endpoint_id, ${now}, ${now}, ${now} from event, whe_webhook_endpoints
          where whe_enabled and (whe_event_types = '[]'::jsonb or whe_event_types ? ${e.type}))`;
  return sql<{ obe_outbound_event_id: number | string }>`with event as (
      insert into obe_outbound_events (obe_uid, obe_type, obe_usr_user_id, obe_payload, obe_create_time)
      values (${e.uid}, ${e.type}, ${e.userId}, ${e.payload}, ${e.now})
      returning obe_outbound_event_id)${fanOut}
    select obe_outbound_event_id from event`;
}
