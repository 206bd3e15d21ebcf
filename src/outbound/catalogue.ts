// The outbound event catalogue and body shapes: what fan-outs and doors read without importing the writer.

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

/**
 * The event as it was written, with its row id (the order events were committed in is not guaranteed by
 * it): null when the row went to the database with the transaction's next statement (recordEvent).
 */
export interface RecordedEvent extends OutboundEvent {
  rowId: number | null;
  /** The member the event is about, when there is one (member emails go to them). */
  userId: number | null;
}

export function isOutboundEventType(type: string): type is OutboundEventType {
  return (OUTBOUND_EVENT_TYPES as readonly string[]).includes(type);
}
