import { sql, type Kysely } from 'kysely';
import type { DB } from '../../db/types.js';
import type { Clock } from '../../lib/clock.js';
import type { RecordedEvent } from '../catalogue.js';

/**
 * One delivery per enabled endpoint whose filter takes this type (an empty filter takes every type), due
 * at once, in the event's transaction: a single statement, so an event with no endpoint costs one round
 * trip that inserts nothing. A `test` event goes only to the endpoint it tests (webhook_endpoint_test).
 */
export async function fanOutWebhooks(trx: Kysely<DB>, clock: Clock, event: RecordedEvent): Promise<void> {
  if (event.type === 'test') return;
  const now = clock.now();
  await sql`insert into whd_webhook_deliveries (whd_obe_outbound_event_id, whd_whe_webhook_endpoint_id, whd_next_attempt_time, whd_create_time, whd_update_time)
    select ${event.rowId}, whe_webhook_endpoint_id, ${now}, ${now}, ${now} from whe_webhook_endpoints
    where whe_enabled and (whe_event_types = '[]'::jsonb or whe_event_types ? ${event.type})`.execute(trx);
}
