import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { cardDriver } from '../helpers/providers/card-driver.js';
import { iosDriver } from '../helpers/providers/ios-driver.js';
import { createProduct, itemFor, postWebhook, setStoreActive, uniqueRef, type ProviderFact, type SourceDriver } from '../helpers/store.js';
import { changeRows, createTier, tierMemberships, type TestTier } from '../helpers/tiers.js';

let t: TestApp;
let silver: TestTier;
let gold: TestTier;
const ios = iosDriver();
beforeAll(async () => {
  t = await createTestApp();
  await setStoreActive(t, true);
  silver = await createTier(t, { name: 'silver', level: 20 });
  gold = await createTier(t, { name: 'gold', level: 30 });
  await cardDriver.setup(t);
  await ios.setup(t);
});
afterAll(async () => t.close());

const T0 = new Date('2026-03-01T11:00:00Z');
const at = (days: number) => new Date(T0.getTime() + days * 86_400_000);

async function fact(d: SourceDriver, tier: TestTier, userId: number, days = 0): Promise<ProviderFact> {
  const providerProductId = uniqueRef(`${d.source}-`);
  const productId = await createProduct(t, { tierId: tier.tierId, refs: { [d.productColumn]: providerProductId } });
  return { userId, productId, providerProductId, ref: uniqueRef('ref'), at: at(days), periodEnd: at(days + 30) };
}

async function deliver(d: SourceDriver, make: keyof SourceDriver, f: ProviderFact) {
  const res = await postWebhook(t, d.source, await (d[make] as (t: TestApp, f: ProviderFact) => Promise<any>)(t, f));
  expect(res.statusCode, res.body).toBe(200);
  return res.json.data;
}

const tierOf = async (userId: number) => (await tierMemberships(t, userId))[0]?.grm_sbt_subscription_tier_id ?? null;

describe('one active source per user', () => {
  it('a purchase from a second source while another is active is recorded, refused for tier purposes, and flagged', async () => {
    const userId = (await t.createUser()).userId;
    const card = await fact(cardDriver, silver, userId);
    await deliver(cardDriver, 'purchase', card);
    const store = await fact(ios, gold, userId, 1);
    const data = await deliver(ios, 'purchase', store);
    expect(data.outcomes).toEqual([{ outcome: 'refused_other_source', orderItemId: expect.any(Number), activeSources: ['card_processor'] }]);
    expect(await tierOf(userId)).toBe(silver.tierId);
    const item = await itemFor(t, 'ios_store', store.ref);
    expect(item).toMatchObject({ odi_usr_user_id: userId, odi_subscription_status: 'active', odi_source_conflict_time: t.clock.now() });
    const last = (await changeRows(t, userId)).at(-1)!;
    expect(last).toMatchObject({ cht_change_reason: 'purchase_refused_other_source', cht_entity_id: gold.tierId, cht_reference_id: item!.odi_order_item_id, cht_old_value: null, cht_new_value: null });
    expect(JSON.parse(last.cht_metadata!)).toMatchObject({ source: 'ios_store', active_sources: ['card_processor'] });

    // Its renewal grants nothing; its expiry takes nothing away.
    const renewal = await deliver(ios, 'renewal', { ...store, at: at(31), periodEnd: at(61) });
    expect(renewal.outcomes[0].outcome).toBe('refused_other_source');
    expect(await tierOf(userId)).toBe(silver.tierId);
    const expiry = await deliver(ios, 'expiry', { ...store, at: at(62) });
    expect(expiry.outcomes[0]).toMatchObject({ outcome: 'not_tier_bearing' });
    expect(await tierOf(userId)).toBe(silver.tierId);
  });

  it('once the first source has ended, a purchase from another source grants', async () => {
    const userId = (await t.createUser()).userId;
    const card = await fact(cardDriver, silver, userId);
    await deliver(cardDriver, 'purchase', card);
    await deliver(cardDriver, 'expiry', { ...card, at: at(30) });
    expect(await tierOf(userId)).toBeNull();
    const store = await fact(ios, gold, userId, 31);
    const data = await deliver(ios, 'purchase', store);
    expect(data.outcomes[0]).toMatchObject({ outcome: 'granted', grant: 'joined' });
    expect(await tierOf(userId)).toBe(gold.tierId);
  });

  it('management store/conflicts lists flagged purchases with the sources the user holds live', async () => {
    const userId = (await t.createUser()).userId;
    await deliver(ios, 'purchase', await fact(ios, silver, userId));
    const refused = await fact(cardDriver, gold, userId, 1);
    await deliver(cardDriver, 'purchase', refused);
    const item = await itemFor(t, 'card_processor', refused.ref);
    const admin = await t.keyHeaders({ userPermission: 10 });
    const res = await t.request({ method: 'GET', url: '/api/v1/management/store/conflicts', headers: admin.headers });
    expect(res.statusCode).toBe(200);
    const entry = res.json.data.conflicts.find((c: { order_item_id: number }) => c.order_item_id === item!.odi_order_item_id);
    expect(entry).toEqual({
      order_item_id: item!.odi_order_item_id,
      order_id: item!.odi_ord_order_id,
      user_id: userId,
      product_id: refused.productId,
      payment_source: 'card_processor',
      subscription_reference: refused.ref,
      subscription_status: 'active',
      flagged_time: '2026-03-01 12:00:00',
      active_sources: ['ios_store'],
    });
    expect(res.json.data.count).toBe(res.json.data.conflicts.length);
    const staff = await t.keyHeaders({ userPermission: 5 });
    expect((await t.request({ method: 'GET', url: '/api/v1/management/store/conflicts', headers: staff.headers })).statusCode).toBe(403);
  });
});
