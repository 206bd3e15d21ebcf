import { randomBytes } from 'node:crypto';
import type { Kysely } from 'kysely';
import type { DB } from '../db/types.js';
import type { Clock } from '../lib/clock.js';
import { formatTimestamp } from '../lib/time.js';
import { fanOutEmails } from './emails/fanout.js';
import { fanOutWebhooks } from './webhooks/fanout.js';

/** The catalogue (DESIGN 15): every type an event may have, dot-delimited. */
export const OUTBOUND_EVENT_TYPES = [
  'member.created',
  'member.updated',
  'member.deleted',
  'tier.granted',
  'tier.removed',
  'subscription.created',
  'subscription.renewed',
  'subscription.changed',
  'subscription.cancel_scheduled',
  'subscription.reactivated',
  'subscription.billing_issue',
  'subscription.on_hold',
  'subscription.paused',
  'subscription.recovered',
  'subscription.expired',
  'subscription.refunded',
  'order.paid',
  'post.published',
  'webhook.endpoint_disabled',
  'test',
] as const;

export type OutboundEventType = (typeof OUTBOUND_EVENT_TYPES)[number];

export const OUTBOUND_API_VERSION = '1.0';

/** A receiver's payload is kept small: ids plus the fields a receiver always needs. */
export const MAX_EVENT_DATA_BYTES = 20_000;

/** The body every receiver gets: the same bytes on every attempt. */
export interface OutboundEvent {
  /** Also the `webhook-id` header: the same on every retry and redelivery. */
  id: string;
  type: OutboundEventType;
  /** When the change happened, in the contract's format (UTC 'YYYY-MM-DD HH:MM:SS'). */
  timestamp: string;
  api_version: typeof OUTBOUND_API_VERSION;
  data: Record<string, unknown>;
}

/** The event as it was written, with its row id (the order events were committed in is not guaranteed by it). */
export interface RecordedEvent extends OutboundEvent {
  rowId: number;
  /** The member the event is about, when there is one (member emails go to them). */
  userId: number | null;
}

export class OutboundEventError extends Error {}

export function isOutboundEventType(type: string): type is OutboundEventType {
  return (OUTBOUND_EVENT_TYPES as readonly string[]).includes(type);
}

/** `evt_` and 22 characters of randomness: unique without coordination between nodes. */
export function newEventId(): string {
  return `evt_${randomBytes(16).toString('base64url')}`;
}

/**
 * Writes an event in the caller's transaction, and in that same transaction what it fans out to (a
 * delivery per matching webhook endpoint, the member emails its type sends). When the change rolls back,
 * so does the event and everything it would have sent.
 */
export async function recordEvent(
  trx: Kysely<DB>,
  clock: Clock,
  type: OutboundEventType,
  data: Record<string, unknown>,
  opts: { userId?: number | null } = {},
): Promise<RecordedEvent> {
  if (!trx.isTransaction) throw new OutboundEventError(`event ${type}: written outside the change's transaction`);
  if (!isOutboundEventType(type)) throw new OutboundEventError(`event ${String(type)}: not in the catalogue`);
  const size = Buffer.byteLength(JSON.stringify(data));
  if (size > MAX_EVENT_DATA_BYTES) throw new OutboundEventError(`event ${type}: data is ${size} bytes, over ${MAX_EVENT_DATA_BYTES}`);
  const now = clock.now();
  const event: OutboundEvent = { id: newEventId(), type, timestamp: formatTimestamp(now), api_version: OUTBOUND_API_VERSION, data };
  const userId = opts.userId ?? null;
  const row = await trx
    .insertInto('obe_outbound_events')
    .values({ obe_uid: event.id, obe_type: type, obe_usr_user_id: userId, obe_payload: JSON.stringify(event), obe_create_time: now })
    .returning('obe_outbound_event_id')
    .executeTakeFirstOrThrow();
  const recorded: RecordedEvent = { ...event, rowId: Number(row.obe_outbound_event_id), userId };
  await fanOutWebhooks(trx, clock, recorded);
  await fanOutEmails(trx, clock, recorded);
  return recorded;
}
