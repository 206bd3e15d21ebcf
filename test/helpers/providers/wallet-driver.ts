import { sign as rsaSign } from 'node:crypto';
import { crc32 } from 'node:zlib';
import { storeAccountToken } from '../../../src/store/accounts.js';
import type { TestApp } from '../app.js';
import type { Delivery, ProviderFact, SourceDriver } from '../store.js';
import { FakePaypal } from './fake-paypal.js';
import { makeCertificate, type TestCertificate } from './x509.js';

export const WALLET_WEBHOOK_ID = 'WH-TEST-0001';
/** The path PayPal serves its webhook certificates under; the fake serves it on 127.0.0.1. */
export const WALLET_CERT_PATH = '/v1/notifications/certs/CERT-test-1';

let n = 0;

/** Signs a wallet-provider (PayPal) webhook the provider's way: RSA-SHA256 over id|time|webhook_id|crc32(body). */
export function signWallet(body: string, o: { key: TestCertificate; time: Date; webhookId?: string; certUrl?: string; certBase?: string; id?: string }): Delivery {
  const id = o.id ?? `tx-${Date.now().toString(36)}-${++n}`;
  const time = o.time.toISOString();
  const message = `${id}|${time}|${o.webhookId ?? WALLET_WEBHOOK_ID}|${crc32(Buffer.from(body)) >>> 0}`;
  const sig = rsaSign('sha256', Buffer.from(message), o.key.privateKey).toString('base64');
  return {
    headers: {
      'content-type': 'application/json',
      'paypal-transmission-id': id,
      'paypal-transmission-time': time,
      'paypal-transmission-sig': sig,
      'paypal-cert-url': o.certUrl ?? `${o.certBase ?? ''}${WALLET_CERT_PATH}`,
      'paypal-auth-algo': 'SHA256withRSA',
    },
    body,
  };
}

/** The wallet provider in the shared webhook scenarios, with the fake PayPal API and certificate host. */
export function walletDriver(): SourceDriver & { fake: FakePaypal; cert: TestCertificate; certFetches(): string[] } {
  const fake = new FakePaypal();
  const cert = makeCertificate({ cn: 'messageverificationcerts.paypal.com', keyType: 'rsa' });
  const otherKey = makeCertificate({ cn: 'someone else', keyType: 'rsa' });
  /** The certificate URLs fetched from the fake certificate host. */
  const certFetches = () => fake.callsTo('GET', '/v1/notifications/certs/').map((c) => `${fake.base}${c.path}`);
  const event = (type: string, f: ProviderFact, resource: Record<string, unknown>) =>
    JSON.stringify({ id: f.eventId ?? `WH-EVT-${Date.now().toString(36)}-${++n}`, event_type: type, create_time: f.at.toISOString(), resource_type: 'subscription', resource });
  const subscriptionResource = async (t: TestApp, f: ProviderFact, status: string) => ({
    id: f.ref,
    status,
    plan_id: f.providerProductId,
    custom_id: await storeAccountToken(t.services.db, f.userId),
    billing_info: { next_billing_time: f.periodEnd.toISOString() },
  });
  const signed = (t: TestApp, body: string) => signWallet(body, { key: cert, time: t.clock.now(), certBase: fake.base });
  const purchaseBody = async (t: TestApp, f: ProviderFact) => {
    const resource = await subscriptionResource(t, f, 'ACTIVE');
    fake.addSubscription(resource);
    return event('BILLING.SUBSCRIPTION.ACTIVATED', f, resource);
  };
  const driver: SourceDriver & { fake: FakePaypal; cert: TestCertificate; certFetches(): string[] } = {
    source: 'wallet_provider',
    productColumn: 'pro_wallet_plan_id',
    fake,
    cert,
    certFetches,
    async setup(t) {
      await fake.start();
      fake.certificates.set('CERT-test-1', cert.pem);
      for (const [k, v] of Object.entries({
        wallet_provider_webhook_id: WALLET_WEBHOOK_ID,
        wallet_provider_api_base: fake.base,
        wallet_provider_client_id: fake.clientId,
        wallet_provider_client_secret: fake.clientSecret,
      })) {
        await t.services.settings.set(k, v);
      }
      // The fake is the certificate host, trusted by setting alone.
      await t.services.settings.set('wallet_provider_cert_hosts', fake.base);
    },
    async teardown() {
      await fake.stop();
    },
    async purchase(t, f) {
      return signed(t, await purchaseBody(t, f));
    },
    async renewal(t, f) {
      fake.addSubscription(await subscriptionResource(t, f, 'ACTIVE'));
      return signed(t, event('PAYMENT.SALE.COMPLETED', f, { id: `SALE-${++n}`, state: 'completed', billing_agreement_id: f.ref, amount: { total: '15.00', currency: 'USD' } }));
    },
    async expiry(t, f) {
      return signed(t, event('BILLING.SUBSCRIPTION.EXPIRED', f, await subscriptionResource(t, f, 'EXPIRED')));
    },
    async refund(t, f) {
      return signed(t, event('PAYMENT.SALE.REFUNDED', f, { id: `REF-${++n}`, state: 'completed', billing_agreement_id: f.ref, amount: { total: '15.00', currency: 'USD' } }));
    },
    async cancelScheduled(t, f) {
      // The member cancels in their PayPal account: the subscription ends at the paid period's end (DESIGN 14).
      return signed(t, event('BILLING.SUBSCRIPTION.CANCELLED', f, await subscriptionResource(t, f, 'CANCELLED')));
    },
    async cancelUndone(t, f) {
      return signed(t, event('BILLING.SUBSCRIPTION.RE-ACTIVATED', f, await subscriptionResource(t, f, 'ACTIVE')));
    },
    async badSignature(t, f) {
      return signWallet(await purchaseBody(t, f), { key: otherKey, time: t.clock.now(), certBase: fake.base });
    },
    async expired(t, f) {
      return signWallet(await purchaseBody(t, f), { key: cert, time: new Date(t.clock.nowMs() - 301_000), certBase: fake.base });
    },
    async tampered(t, f) {
      const d = signed(t, await purchaseBody(t, f));
      return { ...d, body: d.body.replace(f.providerProductId, `${f.providerProductId}-x`) };
    },
    async unsigned(t, f) {
      const d = signed(t, await purchaseBody(t, f));
      const { ['paypal-transmission-sig']: _drop, ...headers } = d.headers;
      return { headers, body: d.body };
    },
  };
  return driver;
}
