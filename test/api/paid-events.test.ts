import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { isApiError } from '../../src/http/errors.js';
import { createCheckout } from '../../src/store/checkout.js';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { createEvent, createEventProduct, liveRegistrations } from '../helpers/events.js';
import { listenLocally, startCardCheckout } from '../helpers/card-checkout.js';
import { FakeStripe } from '../helpers/providers/fake-stripe.js';

/** A paid event (a product names it with pro_evt_event_id) is registered for by paying for that product. */
describe('paid events through the store', () => {
  let t: TestApp;
  let stripe: FakeStripe;
  beforeAll(async () => {
    t = await createTestApp();
    stripe = await startCardCheckout(t, await listenLocally(t), 'sk_test_events');
  });
  afterAll(async () => {
    await stripe.stop();
    await t.close();
  });

  const urls = { successUrl: 'https://site.example/checkout/return?session_id={CHECKOUT_SESSION_ID}', cancelUrl: 'https://site.example/cart' };
  async function paidEvent(max: number | null = null) {
    const eventId = await createEvent(t, { evt_name: 'Gala dinner', evt_max_signups: max });
    const productId = await createEventProduct(t, eventId, 'Gala ticket');
    await (t.services.db as any).updateTable('pro_products').set({ pro_price: 4000 }).where('pro_product_id', '=', productId).execute();
    return { eventId, productId };
  }
  const refusal = async (p: Promise<unknown>) => {
    const e = await p.then(() => null, (err: unknown) => err);
    expect(isApiError(e)).toBe(true);
    return e as { status: number; errortype: string; message: string };
  };

  it('event_register points to the product; paying for it registers the buyer, linked to the order', async () => {
    const { eventId, productId } = await paidEvent();
    const { headers, userId } = await t.keyHeaders();
    const direct = await t.request({ method: 'POST', url: '/api/v1/action/event_register', headers, payload: { evt_event_id: eventId } });
    expect(direct.statusCode).toBe(422);
    expect(direct.json.data.product_id).toBe(productId);

    const { orderId, url } = await createCheckout(t.services.db, t.services, userId, [{ product_id: productId, quantity: 1 }], urls);
    expect(await liveRegistrations(t, eventId)).toEqual([]);
    await stripe.complete(url.split('/pay/')[1]!);
    const regs = await (t.services.db as any).selectFrom('evr_event_registrants').selectAll().where('evr_evt_event_id', '=', eventId).execute();
    expect(regs).toHaveLength(1);
    expect(Number(regs[0].evr_usr_user_id)).toBe(userId);
    expect(Number(regs[0].evr_ord_order_id)).toBe(orderId);
    const item = await (t.services.db as any).selectFrom('odi_order_items').selectAll().where('odi_ord_order_id', '=', orderId).executeTakeFirstOrThrow();
    expect(Number(item.odi_evr_event_registrant_id)).toBe(Number(regs[0].evr_event_registrant_id));
    expect(Number(regs[0].evr_odi_order_item_id)).toBe(Number(item.odi_order_item_id));

    // A second ticket for the same buyer is refused before any payment.
    const again = await refusal(createCheckout(t.services.db, t.services, userId, [{ product_id: productId, quantity: 1 }], urls));
    expect(again.status).toBe(422);
    expect(again.message).toBe('You are already registered for Gala dinner');
  });

  it('a full or closed event sells no more places', async () => {
    const { eventId, productId } = await paidEvent(1);
    const first = await t.createUser();
    const { url } = await createCheckout(t.services.db, t.services, first.userId, [{ product_id: productId, quantity: 1 }], urls);
    await stripe.complete(url.split('/pay/')[1]!);
    expect((await liveRegistrations(t, eventId)).map((r) => Number(r.evr_usr_user_id))).toEqual([first.userId]);

    const second = await t.createUser();
    const full = await refusal(createCheckout(t.services.db, t.services, second.userId, [{ product_id: productId, quantity: 1 }], urls));
    expect([full.status, full.errortype, full.message]).toEqual([422, 'ActionError', 'Gala dinner is full']);

    await (t.services.db as any).updateTable('evt_events').set({ evt_is_accepting_signups: false }).where('evt_event_id', '=', eventId).execute();
    const closed = await refusal(createCheckout(t.services.db, t.services, second.userId, [{ product_id: productId, quantity: 1 }], urls));
    expect(closed.message).toBe('Gala dinner is not accepting registrations');
    const orders = await t.services.db.selectFrom('ord_orders').select('ord_order_id').where('ord_usr_user_id', '=', second.userId).execute();
    expect(orders).toEqual([]);
  });
});
