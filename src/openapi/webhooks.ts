import { OUTBOUND_API_VERSION, OUTBOUND_EVENT_TYPES, type OutboundEventType } from '../outbound/catalogue.js';

// OpenAPI 3.1 `webhooks`: the outbound event catalogue (DESIGN 15), one entry per type with the body a
// receiver gets and the Standard Webhooks headers. Data schemas list the fields every event of the type
// carries; receivers should ignore fields they do not know (new ones may be added within api_version 1.0).

type Schema = Record<string, unknown>;

const nullable = (s: Schema): Schema => ({ ...s, type: [s.type as string, 'null'] });
const str: Schema = { type: 'string' };
const int: Schema = { type: 'integer' };
const time: Schema = { type: 'string', pattern: '^\\d{4}-\\d{2}-\\d{2} \\d{2}:\\d{2}:\\d{2}$', description: "UTC 'YYYY-MM-DD HH:MM:SS'" };
const obj = (properties: Record<string, Schema>, required = Object.keys(properties)): Schema => ({ type: 'object', properties, required, additionalProperties: true });

const tier = obj({ id: int, name: str, level: int });
const member = {
  user_id: int,
  email: nullable(str),
  first_name: nullable(str),
  last_name: nullable(str),
  nickname: nullable(str),
  permission: int,
  is_disabled: { type: 'boolean' },
  contact_preferences: nullable(str),
};
const subscription = obj({
  user_id: nullable(int),
  email: nullable(str),
  order_item_id: int,
  order_id: int,
  product: obj({ id: int, name: str }),
  tier: { oneOf: [tier, { type: 'null' }] },
  source: nullable(str),
  status: nullable(str),
  period_end: { oneOf: [time, { type: 'null' }] },
  cancel_at_period_end: { type: 'boolean' },
  price: nullable({ type: 'number' }),
  currency: nullable(str),
});
const HOW = ['purchase', 'manual', 'import', 'reconcile'];

const DATA: Record<OutboundEventType, { summary: string; data: Schema }> = {
  'member.created': { summary: 'A member registered or was created', data: obj(member) },
  'member.updated': {
    summary: "A member's fields changed; `previous` holds the old values of those in `changed`",
    data: obj({ ...member, changed: { type: 'array', items: str }, previous: { type: 'object', additionalProperties: true } }),
  },
  'member.deleted': { summary: 'A member was deleted (the fields as they were)', data: obj(member) },
  'tier.granted': {
    summary: 'A member joined a tier',
    data: obj({ user_id: int, email: nullable(str), tier, previous_tier: { oneOf: [tier, { type: 'null' }] }, how: { type: 'string', enum: HOW }, source: nullable(str), product_id: nullable(int), order_item_id: nullable(int) }),
  },
  'tier.removed': {
    summary: 'A member left a tier',
    data: obj({ user_id: int, email: nullable(str), tier, how: { type: 'string', enum: HOW }, reason: { type: 'string', enum: ['expiry', 'cancellation', 'refund', 'billing_failure', 'revoked'] }, source: nullable(str), order_item_id: nullable(int) }),
  },
  'subscription.created': { summary: 'A subscription started', data: subscription },
  'subscription.renewed': { summary: 'A subscription renewed for another period', data: subscription },
  'subscription.changed': { summary: 'A subscription moved to another plan (upgrade, downgrade, product change)', data: subscription },
  'subscription.cancel_scheduled': { summary: 'A subscription will end at its period end', data: subscription },
  'subscription.reactivated': { summary: 'A scheduled cancellation was withdrawn', data: subscription },
  'subscription.billing_issue': { summary: 'A renewal payment failed; the member keeps access during the grace period', data: subscription },
  'subscription.on_hold': { summary: 'Access is paused until the payment is fixed', data: subscription },
  'subscription.paused': { summary: 'The subscription was paused', data: subscription },
  'subscription.recovered': { summary: 'A failed payment was recovered', data: subscription },
  'subscription.expired': { summary: 'The subscription ended', data: subscription },
  'subscription.refunded': { summary: 'A subscription payment was refunded', data: subscription },
  'order.paid': {
    summary: 'An order was paid',
    data: obj({
      order_id: int,
      user_id: nullable(int),
      email: nullable(str),
      total: nullable({ type: 'number' }),
      currency: nullable(str),
      source: nullable(str),
      items: { type: 'array', items: obj({ order_item_id: int, product: obj({ id: int, name: str }), price: nullable({ type: 'number' }), is_subscription: { type: 'boolean' } }) },
    }),
  },
  'post.published': {
    summary: 'A post was published (at its publish time when scheduled)',
    data: obj({ post_id: int, title: nullable(str), link: nullable(str), author_user_id: nullable(int), published_time: time, tier_min_level: nullable(int) }),
  },
  'webhook.endpoint_disabled': {
    summary: 'A webhook endpoint was disabled: it answered 410, or failed for 5 days straight',
    data: obj({ endpoint_id: int, url: str, reason: { type: 'string', enum: ['gone', 'failing'] }, failing_since: time, last_status_code: nullable(int) }),
  },
  test: { summary: 'A test event, sent to one endpoint from /admin/webhooks or webhook_endpoint_test', data: obj({ endpoint_id: int, message: str }) },
};

const HEADERS = [
  { name: 'webhook-id', description: 'The event id: the same on every retry and redelivery (deduplicate on it)', schema: { type: 'string', pattern: '^evt_' } },
  { name: 'webhook-timestamp', description: 'When this attempt was signed, unix seconds', schema: { type: 'string', pattern: '^\\d+$' } },
  { name: 'webhook-signature', description: 'Space-separated `v1,<base64 HMAC-SHA256>` of `{webhook-id}.{webhook-timestamp}.{body}` with the endpoint secret (two during a rotation)', schema: { type: 'string' } },
].map((h) => ({ ...h, in: 'header', required: true }));

/** The `webhooks` object of the document: every catalogue type with its payload schema. */
export function outboundWebhooks(): Record<string, unknown> {
  return Object.fromEntries(
    OUTBOUND_EVENT_TYPES.map((type) => [
      type,
      {
        post: {
          summary: DATA[type].summary,
          description: 'Signed with Standard Webhooks 1.0; any 2xx answer acknowledges it. Other answers, timeouts (15 s) and connection errors are retried at 5 s, 5 min, 30 min, 2 h, 5 h, 10 h, 14 h, 20 h and 24 h; 410 disables the endpoint.',
          tags: ['Outbound events'],
          parameters: HEADERS,
          requestBody: {
            required: true,
            content: {
              'application/json': {
                schema: {
                  type: 'object',
                  properties: { id: { type: 'string', pattern: '^evt_' }, type: { const: type }, timestamp: time, api_version: { const: OUTBOUND_API_VERSION }, data: DATA[type].data },
                  required: ['id', 'type', 'timestamp', 'api_version', 'data'],
                  additionalProperties: false,
                },
              },
            },
          },
          responses: { '2XX': { description: 'Received' }, '410': { description: 'Gone: the endpoint is disabled and nothing more is sent to it' } },
        },
      },
    ]),
  );
}
