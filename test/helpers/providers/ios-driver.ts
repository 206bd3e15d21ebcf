import { randomUUID } from 'node:crypto';
import { storeAccountToken } from '../../../src/store/accounts.js';
import type { TestApp } from '../app.js';
import type { Delivery, ProviderFact, SourceDriver } from '../store.js';
import { makeAppleChain, makeAppleLeaf, signAppleJws, type AppleChain } from './apple-signer.js';
import { FakeOcspResponder } from './fake-ocsp.js';

export const IOS_BUNDLE_ID = 'com.example.gatehouse';

/** The iOS store (App Store Server Notifications V2, Sandbox) in the shared webhook scenarios. */
/** What a notification's signed transaction and renewal info say besides the fact: price in milliunits, the product that renews. */
export interface IosExtras {
  price?: number;
  autoRenewProductId?: string;
  /** Further fields of the signed renewal info (e.g. gracePeriodExpiresDate, isInBillingRetryPeriod). */
  renewal?: Record<string, unknown>;
}

export interface IosDriver extends SourceDriver {
  /** The test authority's chain (minted by setup, once its OCSP responder listens). */
  readonly chain: AppleChain;
  /** The test authority's OCSP responder, named by the chain's certificates. */
  readonly ocsp: FakeOcspResponder;
  notify(t: TestApp, f: ProviderFact, type: string, subtype?: string, chain?: AppleChain, extras?: IosExtras): Promise<Delivery>;
}

/**
 * The iOS store through a test authority: a root in ios_store_root_certificates, an intermediate and a
 * leaf naming the authority's OCSP responder on 127.0.0.1, so the App Store library's online checks
 * (revocation, validity now) run as in production.
 */
export function iosDriver(): IosDriver {
  const ocsp = new FakeOcspResponder();
  let minted: { chain: AppleChain; untrusted: AppleChain; expiredChain: AppleChain } | null = null;
  const authority = () => {
    if (!minted) throw new Error('iosDriver: setup() mints the test authority');
    return minted;
  };

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
  const notify = async (t: TestApp, f: ProviderFact, type: string, subtype?: string, signer: AppleChain = authority().chain, extras: IosExtras = {}): Promise<Delivery> => ({
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ signedPayload: signAppleJws(await payloadFor(t, f, type, subtype, signer, extras), signer) }),
  });
  return {
    source: 'ios_store',
    productColumn: 'pro_ios_product_id',
    get chain() {
      return authority().chain;
    },
    ocsp,
    notify,
    async setup(t) {
      if (!minted) {
        await ocsp.start();
        const chain = makeAppleChain({ ocspUrl: ocsp.url });
        ocsp.serve(chain.root, chain.intermediate);
        // A leaf of the trusted chain whose validity has ended.
        const expiredChain: AppleChain = { ...chain, leaf: makeAppleLeaf(chain.intermediate, { leafNotBefore: new Date('2025-01-01T00:00:00Z'), leafNotAfter: new Date('2025-12-31T00:00:00Z') }) };
        minted = { chain, untrusted: makeAppleChain({ ocspUrl: ocsp.url }), expiredChain };
      }
      await t.services.settings.set('ios_store_bundle_id', IOS_BUNDLE_ID);
      await t.services.settings.set('ios_store_environment', 'Sandbox');
      await t.services.settings.set('ios_store_root_certificates', minted.chain.root.pem);
    },
    async teardown() {
      await ocsp.stop();
    },
    purchase: (t, f) => notify(t, f, 'SUBSCRIBED', 'INITIAL_BUY'),
    renewal: (t, f) => notify(t, f, 'DID_RENEW'),
    expiry: (t, f) => notify(t, f, 'EXPIRED', 'VOLUNTARY'),
    refund: (t, f) => notify(t, f, 'REFUND'),
    cancelScheduled: (t, f) => notify(t, f, 'DID_CHANGE_RENEWAL_STATUS', 'AUTO_RENEW_DISABLED'),
    cancelUndone: (t, f) => notify(t, f, 'DID_CHANGE_RENEWAL_STATUS', 'AUTO_RENEW_ENABLED'),
    badSignature: (t, f) => notify(t, f, 'SUBSCRIBED', 'INITIAL_BUY', authority().untrusted),
    expired: (t, f) => notify(t, f, 'SUBSCRIBED', 'INITIAL_BUY', authority().expiredChain),
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
