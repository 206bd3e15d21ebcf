import { randomBytes } from 'node:crypto';
import type { Kysely } from 'kysely';
import type { DB } from '../db/types.js';
import type { Clock } from '../lib/clock.js';
import { formatTimestamp } from '../lib/time.js';
import { MAX_EVENT_DATA_BYTES, OUTBOUND_API_VERSION, isOutboundEventType, type OutboundEvent, type OutboundEventType, type RecordedEvent } from './catalogue.js';
import { deferredWrite } from '../db/deferred-write.js';
import { fanOutEmails, mayQueueEmail } from './emails/fanout.js';
import { eventWithDeliveries, insertEventWithDeliveries } from './webhooks/fanout.js';

export * from './catalogue.js';

export class OutboundEventError extends Error {}

/** `evt_` and 22 characters of randomness: unique without coordination between nodes. */
export function newEventId(): string {
  return `evt_${randomBytes(16).toString('base64url')}`;
}

/**
 * Writes an event in the caller's transaction, and in that same transaction what it fans out to (a
 * delivery per matching webhook endpoint, the member emails its type sends). When the change rolls back,
 * so does the event and everything it would have sent. `opts.id`: the event's id, when the caller chose it
 * beforehand (newEventId) to store it with its own row.
 */
export async function recordEvent(
  trx: Kysely<DB>,
  clock: Clock,
  type: OutboundEventType,
  data: Record<string, unknown>,
  opts: { userId?: number | null; id?: string } = {},
): Promise<RecordedEvent> {
  if (!trx.isTransaction) throw new OutboundEventError(`event ${type}: written outside the change's transaction`);
  if (!isOutboundEventType(type)) throw new OutboundEventError(`event ${String(type)}: not in the catalogue`);
  const size = Buffer.byteLength(JSON.stringify(data));
  if (size > MAX_EVENT_DATA_BYTES) throw new OutboundEventError(`event ${type}: data is ${size} bytes, over ${MAX_EVENT_DATA_BYTES}`);
  const now = clock.now();
  const event: OutboundEvent = { id: opts.id ?? newEventId(), type, timestamp: formatTimestamp(now), api_version: OUTBOUND_API_VERSION, data };
  const userId = opts.userId ?? null;
  // The row and its webhook deliveries in one statement; when no member email needs the row's id, that
  // statement goes to the database with the transaction's next one.
  const values = { uid: event.id, type, userId, payload: JSON.stringify(event), now };
  if (type !== 'test' && !mayQueueEmail(type, userId)) {
    await deferredWrite(trx, eventWithDeliveries(clock, values));
    return { ...event, rowId: null, userId };
  }
  const rowId = await insertEventWithDeliveries(trx, clock, values);
  await fanOutEmails(trx, clock, { ...event, rowId, userId });
  return { ...event, rowId, userId };
}
