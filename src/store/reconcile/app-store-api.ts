import { AppStoreServerAPIClient, Environment, type JWSRenewalInfoDecodedPayload, type JWSTransactionDecodedPayload } from '@apple/app-store-server-library';
import type { URLSearchParams } from 'node:url';
import type { Settings } from '../../settings/store.js';
import type { StoreContext } from '../events.js';
import { verifierFor } from '../webhooks/ios-store.js';

const API_ENVIRONMENTS: Record<string, Environment> = {
  Production: Environment.PRODUCTION,
  Sandbox: Environment.SANDBOX,
  LocalTesting: Environment.LOCAL_TESTING,
};

/**
 * The App Store Server API client of @apple/app-store-server-library, sending its requests to
 * ios_store_api_base when that is set (a local fake, or a stand-in for the environment's host). The
 * library picks its host from the environment; makeFetchRequest is the override point it offers for
 * the transport, and the path, query, method, body and signed bearer token it builds are used as they are.
 */
export class AppStoreApiClient extends AppStoreServerAPIClient {
  private readonly base: string;

  constructor(signingKey: string, keyId: string, issuerId: string, bundleId: string, environment: Environment, base: string) {
    super(signingKey, keyId, issuerId, bundleId, environment);
    this.base = base.replace(/\/+$/, '');
  }

  protected override async makeFetchRequest(path: string, query: URLSearchParams, method: string, body: string | Buffer | undefined, headers: { [key: string]: string }) {
    if (!this.base) return super.makeFetchRequest(path, query, method, body, headers);
    const res = await fetch(`${this.base}${path}?${query.toString()}`, { method, headers, ...(body !== undefined ? { body } : {}), signal: AbortSignal.timeout(20_000) });
    // The library reads ok, status and json() of the answer, which the platform's Response has too.
    return res as never;
  }

  /** A client from the settings (the in-app key ios_store_api_*), or the reason there is none. */
  static fromSettings(settings: Settings): AppStoreApiClient {
    const environment = API_ENVIRONMENTS[settings.string('ios_store_environment')];
    const missing = ['ios_store_api_key_id', 'ios_store_api_issuer_id', 'ios_store_api_private_key', 'ios_store_bundle_id'].filter((n) => !settings.string(n));
    if (!environment) throw new Error(`ios_store_environment ${settings.string('ios_store_environment')} has no App Store Server API`);
    if (missing.length > 0) throw new Error(`The App Store Server API is not configured (${missing.join(', ')} not set)`);
    return new AppStoreApiClient(
      settings.string('ios_store_api_private_key'),
      settings.string('ios_store_api_key_id'),
      settings.string('ios_store_api_issuer_id'),
      settings.string('ios_store_bundle_id'),
      environment,
      settings.string('ios_store_api_base'),
    );
  }
}

export interface AppStoreSubscription {
  /** lastTransactions[].status: 1 active, 2 expired, 3 billing retry, 4 grace period, 5 revoked. */
  status: number;
  transaction: JWSTransactionDecodedPayload;
  renewal: JWSRenewalInfoDecodedPayload | null;
}

/**
 * The subscription's latest state from the App Store Server API (Get All Subscription Statuses), its
 * signed transaction and renewal info verified like a notification's (ios_store_root_certificates, bundle
 * id, environment). Throws when the API cannot be asked, answers an error, or does not name the subscription.
 */
export async function readAppStoreSubscription(ctx: StoreContext, originalTransactionId: string): Promise<AppStoreSubscription> {
  const verifier = await verifierFor(ctx.settings);
  if (!verifier) throw new Error('iOS store signature verification is not configured');
  const client = AppStoreApiClient.fromSettings(ctx.settings);
  const res = await client.getAllSubscriptionStatuses(originalTransactionId);
  const last = (res.data ?? []).flatMap((group) => group.lastTransactions ?? []).find((t) => t.originalTransactionId === originalTransactionId);
  if (!last?.signedTransactionInfo || typeof last.status !== 'number') throw new Error('The App Store Server API did not report the subscription');
  const transaction = await verifier.verifyAndDecodeTransaction(last.signedTransactionInfo);
  if (transaction.originalTransactionId !== originalTransactionId) throw new Error('The App Store Server API reported another subscription');
  const renewal = last.signedRenewalInfo ? await verifier.verifyAndDecodeRenewalInfo(last.signedRenewalInfo) : null;
  return { status: last.status, transaction, renewal };
}
