import Stripe from 'stripe';

let seq = 0;

/** A card-processor (Stripe) event envelope around a data object. `created` is in seconds. */
export function stripeEvent(type: string, object: Record<string, unknown>, o: { id?: string; created: number; previous?: Record<string, unknown> }) {
  return {
    id: o.id ?? `evt_test_${Date.now().toString(36)}_${++seq}`,
    object: 'event',
    api_version: '2025-03-31.basil',
    created: o.created,
    livemode: false,
    type,
    data: { object, ...(o.previous ? { previous_attributes: o.previous } : {}) },
  };
}

/**
 * A genuine Stripe-Signature header for the payload (HMAC-SHA256 over "t.payload" with the endpoint
 * secret), made by the SDK's own test helper. `timestamp` is in seconds.
 */
export function stripeSignature(payload: string, secret: string, timestamp: number): string {
  return Stripe.webhooks.generateTestHeaderString({ payload, secret, timestamp });
}
