import { randomUUID } from 'node:crypto';
import { storeAccountToken } from '../../../src/store/accounts.js';
import type { TestApp } from '../app.js';
import type { Delivery, ProviderFact, SourceDriver } from '../store.js';
import { makeAppleChain, makeAppleLeaf, signAppleJws, type AppleChain } from './apple-signer.js';

export const IOS_BUNDLE_ID = 'com.example.gatehouse';

/** The iOS store (App Store Server Notifications V2, Sandbox) in the shared webhook scenarios. */
/** What a notification's signed transaction and renewal info say besides the fact: price in milliunits, the product that renews. */
export interface IosExtras {
  price?: number;
  autoRenewProductId?: string;
  /** Further fields of the signed renewal info (e.g. gracePeriodExpiresDate, isInBillingRetryPeriod). */
  renewal?: Record<string, unknown>;
}

export function iosDriver(): SourceDriver & { chain: AppleChain; notify(t: TestApp, f: ProviderFact, type: string, subtype?: string, chain?: AppleChain, extras?: IosExtras): Promise<Delivery> } {
  const chain = makeAppleChain();
  const untrusted = makeAppleChain();
  // A leaf of the trusted chain whose validity ended before the payloads' signing dates.
  const expiredChain: AppleChain = { ...chain, leaf: makeAppleLeaf(chain.intermediate, { leafNotBefore: new Date('2025-01-01T00:00:00Z'), leafNotAfter: new Date('2025-12-31T00:00:00Z') }) };

  async function payloadFor(t: TestApp, f: ProviderFact, type: string, subtype: string | undefined, signer: AppleChain, extras: IosExtras) {
    const signedDate = f.at.getTime();
    const transaction = {
      originalTransactionId: f.ref,
      transactionId: `${f.ref}-${signedDate}`,
      productId: f.providerProductId,
      bundleId: IOS_BUNDLE_ID,
      purchaseDate: signedDate,
      originalPurchaseDate: signedDate,
      expiresDate: f.periodEnd.getTime(),
      appAccountToken: await storeAccountToken(t.services.db, f.userId),
      environment: 'Sandbox',
      signedDate,
      price: extras.price ?? 14990,
      currency: 'USD',
      quantity: 1,
    };
    const renewal = { originalTransactionId: f.ref, autoRenewProductId: extras.autoRenewProductId ?? f.providerProductId, productId: f.providerProductId, autoRenewStatus: 1, environment: 'Sandbox', signedDate, ...extras.renewal };
    return {
      notificationType: type,
      ...(subtype ? { subtype } : {}),
      notificationUUID: f.eventId ?? randomUUID(),
      version: '2.0',
      signedDate,
      data: { bundleId: IOS_BUNDLE_ID, environment: 'Sandbox', signedTransactionInfo: signAppleJws(transaction, signer), signedRenewalInfo: signAppleJws(renewal, signer), status: 1 },
    };
  }
  const notify = async (t: TestApp, f: ProviderFact, type: string, subtype?: string, signer: AppleChain = chain, extras: IosExtras = {}): Promise<Delivery> => ({
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ signedPayload: signAppleJws(await payloadFor(t, f, type, subtype, signer, extras), signer) }),
  });
  return {
    source: 'ios_store',
    productColumn: 'pro_ios_product_id',
    chain,
    notify,
    async setup(t) {
      await t.services.settings.set('ios_store_bundle_id', IOS_BUNDLE_ID);
      await t.services.settings.set('ios_store_environment', 'Sandbox');
      await t.services.settings.set('ios_store_root_certificates', chain.root.pem);
      // No OCSP in tests: the library checks validity at each payload's signing date instead.
      t.services.store.deps.iosOnlineChecks = false;
    },
    async teardown() {},
    purchase: (t, f) => notify(t, f, 'SUBSCRIBED', 'INITIAL_BUY'),
    renewal: (t, f) => notify(t, f, 'DID_RENEW'),
    expiry: (t, f) => notify(t, f, 'EXPIRED', 'VOLUNTARY'),
    refund: (t, f) => notify(t, f, 'REFUND'),
    cancelScheduled: (t, f) => notify(t, f, 'DID_CHANGE_RENEWAL_STATUS', 'AUTO_RENEW_DISABLED'),
    cancelUndone: (t, f) => notify(t, f, 'DID_CHANGE_RENEWAL_STATUS', 'AUTO_RENEW_ENABLED'),
    badSignature: (t, f) => notify(t, f, 'SUBSCRIBED', 'INITIAL_BUY', untrusted),
    expired: (t, f) => notify(t, f, 'SUBSCRIBED', 'INITIAL_BUY', expiredChain),
    async tampered(t, f) {
      const d = await notify(t, f, 'SUBSCRIBED', 'INITIAL_BUY');
      const jws = (JSON.parse(d.body) as { signedPayload: string }).signedPayload;
      const [h, p, s] = jws.split('.') as [string, string, string];
      const payload = JSON.parse(Buffer.from(p, 'base64url').toString('utf8'));
      payload.notificationType = 'DID_RENEW';
      return { ...d, body: JSON.stringify({ signedPayload: `${h}.${Buffer.from(JSON.stringify(payload)).toString('base64url')}.${s}` }) };
    },
    async unsigned() {
      return { headers: { 'content-type': 'application/json' }, body: JSON.stringify({ notificationType: 'SUBSCRIBED' }) };
    },
  };
}
