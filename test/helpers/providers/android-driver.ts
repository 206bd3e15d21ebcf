import { storeAccountToken } from '../../../src/store/accounts.js';
import type { TestApp } from '../app.js';
import type { Delivery, ProviderFact, SourceDriver } from '../store.js';
import { FakePlay } from './fake-play.js';
import { makeOidcKey, signOidcToken } from './google-oidc-signer.js';

export const ANDROID_PACKAGE = 'com.example.gatehouse';
export const ANDROID_AUDIENCE = 'https://gatehouse.example/api/v1/webhooks/android_store';
export const ANDROID_PUSH_EMAIL = 'pubsub-push@example-project.iam.gserviceaccount.com';

let n = 0;

/** The Android store (Pub/Sub push + Play Developer API) in the shared webhook scenarios. */
export function androidDriver(): SourceDriver & {
  play: FakePlay;
  key: ReturnType<typeof makeOidcKey>;
  push(t: TestApp, f: ProviderFact, type: number, o?: { token?: string }): Promise<Delivery>;
  /** Sets the Play API's state of the subscription (extra fields merged in), then pushes a notification of `type`. */
  pushState(t: TestApp, f: ProviderFact, state: string, type: number, extra?: Record<string, unknown>): Promise<Delivery>;
} {
  const play = new FakePlay();
  const key = makeOidcKey();
  const stranger = makeOidcKey('test-kid-1');
  /**
   * The Play API's subscriptionsv2 resource as it reads after the fact: startTime is when the subscription
   * began (kept from the first read), an expired (or revoked) subscription's expiryTime is when it ended,
   * a user's cancellation carries its cancelTime.
   */
  const startTimes = new Map<string, string>();
  const setState = async (t: TestApp, f: ProviderFact, state: string, o: { starts?: boolean; extra?: Record<string, unknown> } = {}) => {
    if (o.starts || !startTimes.has(f.ref)) startTimes.set(f.ref, f.at.toISOString());
    const ended = state === 'SUBSCRIPTION_STATE_EXPIRED';
    play.subscriptions.set(f.ref, {
      kind: 'androidpublisher#subscriptionPurchaseV2',
      startTime: startTimes.get(f.ref),
      subscriptionState: state,
      ...(state === 'SUBSCRIPTION_STATE_CANCELED' ? { canceledStateContext: { userInitiatedCancellation: { cancelTime: f.at.toISOString() } } } : {}),
      latestOrderId: `GPA.${f.ref}`,
      acknowledgementState: 'ACKNOWLEDGEMENT_STATE_ACKNOWLEDGED',
      externalAccountIdentifiers: { obfuscatedExternalAccountId: await storeAccountToken(t.services.db, f.userId) },
      lineItems: [{ productId: f.providerProductId, expiryTime: (ended ? f.at : f.periodEnd).toISOString() }],
      ...o.extra,
    });
  };
  const body = (f: ProviderFact, notification: Record<string, unknown>) =>
    JSON.stringify({
      message: {
        data: Buffer.from(JSON.stringify({ version: '1.0', packageName: ANDROID_PACKAGE, eventTimeMillis: String(f.at.getTime()), ...notification })).toString('base64'),
        messageId: f.eventId ?? `${Date.now()}${++n}`,
        publishTime: f.at.toISOString(),
      },
      subscription: 'projects/example/subscriptions/play-rtdn',
    });
  const push = async (t: TestApp, f: ProviderFact, type: number, o: { token?: string } = {}): Promise<Delivery> => ({
    headers: { 'content-type': 'application/json', authorization: `Bearer ${o.token ?? signOidcToken(key, { aud: ANDROID_AUDIENCE, email: ANDROID_PUSH_EMAIL })}` },
    body: body(f, { subscriptionNotification: { version: '1.0', notificationType: type, purchaseToken: f.ref, subscriptionId: f.providerProductId } }),
  });
  const withState = (state: string, type: number) => async (t: TestApp, f: ProviderFact) => {
    // A purchase notification's subscription began at the fact's time.
    await setState(t, f, state, { starts: type === 4 });
    return push(t, f, type);
  };
  return {
    source: 'android_store',
    productColumn: 'pro_android_product_id',
    play,
    key,
    push,
    async pushState(t, f, state, type, extra = {}) {
      await setState(t, f, state, { extra });
      return push(t, f, type);
    },
    async setup(t) {
      await play.start();
      await t.services.settings.set('android_store_package_name', ANDROID_PACKAGE);
      await t.services.settings.set('android_store_push_audience', ANDROID_AUDIENCE);
      await t.services.settings.set('android_store_push_email', ANDROID_PUSH_EMAIL);
      // Every Google endpoint by setting: the Play API, its token endpoint and the push-token certificates.
      play.certs = key.certs;
      for (const [k, v] of Object.entries(play.settings())) await t.services.settings.set(k, v);
    },
    async teardown() {
      await play.stop();
    },
    purchase: withState('SUBSCRIPTION_STATE_ACTIVE', 4),
    renewal: withState('SUBSCRIPTION_STATE_ACTIVE', 2),
    expiry: withState('SUBSCRIPTION_STATE_EXPIRED', 13),
    async refund(t, f) {
      await setState(t, f, 'SUBSCRIPTION_STATE_EXPIRED');
      return {
        headers: { 'content-type': 'application/json', authorization: `Bearer ${signOidcToken(key, { aud: ANDROID_AUDIENCE, email: ANDROID_PUSH_EMAIL })}` },
        body: body(f, { voidedPurchaseNotification: { purchaseToken: f.ref, orderId: `GPA.${f.ref}`, productType: 1, refundType: 1 } }),
      };
    },
    cancelScheduled: withState('SUBSCRIPTION_STATE_CANCELED', 3),
    cancelUndone: withState('SUBSCRIPTION_STATE_ACTIVE', 7),
    async badSignature(t, f) {
      await setState(t, f, 'SUBSCRIPTION_STATE_ACTIVE');
      return push(t, f, 4, { token: signOidcToken(stranger, { aud: ANDROID_AUDIENCE }) });
    },
    async expired(t, f) {
      await setState(t, f, 'SUBSCRIPTION_STATE_ACTIVE');
      return push(t, f, 4, { token: signOidcToken(key, { aud: ANDROID_AUDIENCE, iatSeconds: Math.floor(Date.now() / 1000) - 7200 }) });
    },
    async tampered(t, f) {
      await setState(t, f, 'SUBSCRIPTION_STATE_ACTIVE');
      const d = await push(t, f, 4);
      const [h, p, s] = d.headers.authorization!.slice(7).split('.') as [string, string, string];
      const claims = JSON.parse(Buffer.from(p, 'base64url').toString('utf8'));
      claims.exp += 3600;
      return { ...d, headers: { ...d.headers, authorization: `Bearer ${h}.${Buffer.from(JSON.stringify(claims)).toString('base64url')}.${s}` } };
    },
    async unsigned(t, f) {
      await setState(t, f, 'SUBSCRIPTION_STATE_ACTIVE');
      const d = await push(t, f, 4);
      return { headers: { 'content-type': 'application/json' }, body: d.body };
    },
  };
}
