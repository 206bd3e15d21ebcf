import { Validator } from '@seriousme/openapi-schema-validator';
import Ajv2020 from 'ajv/dist/2020.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { OUTBOUND_EVENT_TYPES, recordEvent } from '../../src/outbound/events.js';
import { createTestApp, type TestApp } from '../helpers/app.js';

let t: TestApp;
beforeAll(async () => {
  t = await createTestApp();
});
afterAll(async () => t?.close());

const fetchDoc = async () => (await t.request({ method: 'GET', url: '/api/openapi.json' })).json;

describe('OpenAPI 3.1 webhooks: the outbound event catalogue', () => {
  it('lists every catalogue type with its payload schema and the Standard Webhooks headers, and still validates', async () => {
    const doc = await fetchDoc();
    expect(Object.keys(doc.webhooks).sort()).toEqual([...OUTBOUND_EVENT_TYPES].sort());
    for (const type of OUTBOUND_EVENT_TYPES) {
      const op = doc.webhooks[type].post;
      expect(op.parameters.map((p: { name: string }) => p.name)).toEqual(['webhook-id', 'webhook-timestamp', 'webhook-signature']);
      expect(op.requestBody.content['application/json'].schema.properties.type).toEqual({ const: type });
    }
    const result = await new Validator().validate(doc as never);
    expect(result.errors ?? []).toEqual([]);
  });

  it('describes the body a receiver gets: a recorded event validates against its type schema', async () => {
    const doc = await fetchDoc();
    const ajv = new (Ajv2020 as unknown as typeof Ajv2020.default)({ strict: false });
    const samples: Array<[(typeof OUTBOUND_EVENT_TYPES)[number], Record<string, unknown>]> = [
      ['tier.granted', { user_id: 1, email: 'a@example.com', tier: { id: 2, name: 'gold', level: 20 }, previous_tier: null, how: 'purchase', source: 'card_processor', product_id: 3, order_item_id: 4 }],
      ['webhook.endpoint_disabled', { endpoint_id: 1, url: 'https://x.example/h', reason: 'gone', failing_since: '2026-03-01 12:00:00', last_status_code: 410 }],
      ['test', { endpoint_id: 1, message: 'A test event from Gatehouse' }],
    ];
    for (const [type, data] of samples) {
      const event = await t.services.db.transaction().execute((trx) => recordEvent(trx, t.clock, type, data));
      const { rowId: _r, userId: _u, ...body } = event;
      const validate = ajv.compile(doc.webhooks[type].post.requestBody.content['application/json'].schema);
      expect(validate(JSON.parse(JSON.stringify(body))), JSON.stringify(validate.errors)).toBe(true);
      expect(validate({ ...body, type: 'member.created' })).toBe(false);
    }
  });
});
