import type { Environment, JWSRenewalInfoDecodedPayload, JWSTransactionDecodedPayload, ResponseBodyV2DecodedPayload, SignedDataVerifier } from '@apple/app-store-server-library';
import { ApiError, authError } from '../../http/errors.js';
import type { Settings } from '../../settings/store.js';
import type { StoreEvent, VerifiedDelivery, WebhookAdapter } from '../events.js';

/** @apple/app-store-server-library, loaded at its first use rather than at start (about 0.3 s with its dependencies). */
function appStoreLibrary(): Promise<typeof import('@apple/app-store-server-library')> {
  return import('@apple/app-store-server-library');
}

/** The DER certificates of a PEM list (ios_store_root_certificates). */
export function pemListToDer(pems: string): Buffer[] {
  return [...pems.matchAll(/-----BEGIN CERTIFICATE-----([\s\S]*?)-----END CERTIFICATE-----/g)].map((m) => Buffer.from(m[1]!.replace(/\s+/g, ''), 'base64'));
}

let cached: { key: string; verifier: SignedDataVerifier } | null = null;

/**
 * One verifier per configuration (it caches verified chains); null when the settings cannot make one.
 * Online checks are always on: every chain's leaf and intermediate are checked for revocation (OCSP, at
 * the responder each certificate names) and for validity at the current date. The library skips
 * verification only for Xcode and LocalTesting payloads, which are not signed and refused here.
 */
export async function verifierFor(settings: Settings): Promise<SignedDataVerifier | null> {
  const { Environment, SignedDataVerifier } = await appStoreLibrary();
  // The environments whose payloads are signed by the App Store; Xcode and LocalTesting are not, so they are refused.
  const signedEnvironments: Record<string, Environment> = { Production: Environment.PRODUCTION, Sandbox: Environment.SANDBOX };
  const environment = signedEnvironments[settings.string('ios_store_environment')];
  const bundleId = settings.string('ios_store_bundle_id');
  const roots = pemListToDer(settings.string('ios_store_root_certificates'));
  const appAppleId = Number(settings.string('ios_store_app_apple_id')) || undefined;
  if (!environment || !bundleId || roots.length === 0) return null;
  if (environment === Environment.PRODUCTION && appAppleId === undefined) return null;
  const key = [environment, bundleId, appAppleId, settings.string('ios_store_root_certificates')].join('\n');
  if (cached?.key !== key) cached = { key, verifier: new SignedDataVerifier(roots, true, environment, bundleId, appAppleId) };
  return cached.verifier;
}

type Kind = StoreEvent['kind'];

/** The store's reading of an App Store Server Notification V2 type and subtype; null: not acted on. */
export function iosEventKind(type: string | undefined, subtype: string | undefined): Kind | null {
  switch (type) {
    case 'SUBSCRIBED':
      return 'purchase';
    case 'DID_RENEW':
      // Subtype BILLING_RECOVERY (a renewal after failures) too: a renewal ends a billing issue.
      return 'renewal';
    case 'DID_CHANGE_RENEWAL_PREF':
      // UPGRADE takes effect at once (a new period of the higher product); DOWNGRADE (and no subtype: a
      // downgrade undone) changes only the product that renews.
      return subtype === 'UPGRADE' ? 'product_change' : 'product_change_scheduled';
    case 'DID_FAIL_TO_RENEW':
      // In the Billing Grace Period the member keeps access; without it the App Store holds the account.
      return subtype === 'GRACE_PERIOD' ? 'in_grace' : 'on_hold';
    case 'DID_CHANGE_RENEWAL_STATUS':
      return subtype === 'AUTO_RENEW_DISABLED' ? 'cancellation_scheduled' : subtype === 'AUTO_RENEW_ENABLED' ? 'cancellation_undone' : null;
    case 'EXPIRED':
      return subtype === 'VOLUNTARY' ? 'cancellation' : 'expiry';
    case 'GRACE_PERIOD_EXPIRED':
      // The App Store keeps retrying (billing retry) after the grace period: a hold, not an end (DESIGN 14).
      return 'on_hold';
    case 'REFUND':
    case 'REVOKE':
      return 'refund';
    default:
      return null;
  }
}

/** The notification's signed date; the receipt time only when it states none. */
function iosEventTime(n: ResponseBodyV2DecodedPayload, receivedAt: Date): { eventTime: Date; receiptTime?: true } {
  return typeof n.signedDate === 'number' ? { eventTime: new Date(n.signedDate) } : { eventTime: receivedAt, receiptTime: true };
}

function normaliseIos(n: ResponseBodyV2DecodedPayload, tx: JWSTransactionDecodedPayload | null, renewal: JWSRenewalInfoDecodedPayload | null, receivedAt: Date): StoreEvent[] {
  const kind = iosEventKind(n.notificationType, n.subtype);
  if (!kind || !tx?.originalTransactionId) return [];
  if (kind === 'product_change_scheduled') {
    // The product that renews is the renewal info's; the transaction is still the current product's.
    return [
      {
        kind,
        source: 'ios_store',
        reference: tx.originalTransactionId,
        user: { accountToken: tx.appAccountToken ?? null },
        product: { providerProductId: renewal?.autoRenewProductId ?? null },
        periodEnd: typeof tx.expiresDate === 'number' ? new Date(tx.expiresDate) : null,
        ...iosEventTime(n, receivedAt),
      },
    ];
  }
  // A failure reports the period that was not renewed: the recorded period stays.
  const billingIssue = kind === 'in_grace' || kind === 'on_hold';
  return [
    {
      kind,
      source: 'ios_store',
      reference: tx.originalTransactionId,
      user: { accountToken: tx.appAccountToken ?? null },
      product: { providerProductId: tx.productId ?? null },
      periodEnd: !billingIssue && typeof tx.expiresDate === 'number' ? new Date(tx.expiresDate) : null,
      ...(kind === 'in_grace' ? { graceUntil: typeof renewal?.gracePeriodExpiresDate === 'number' ? new Date(renewal.gracePeriodExpiresDate) : null } : {}),
      ...iosEventTime(n, receivedAt),
      // App Store prices are in milliunits of the currency.
      amount: typeof tx.price === 'number' ? Math.round(tx.price / 10) : null,
      currency: typeof tx.currency === 'string' ? tx.currency.toLowerCase() : null,
      payment: { saleId: typeof tx.transactionId === 'string' ? tx.transactionId : null },
    },
  ];
}

/** A verified notification (or one restored from its log row) as the store acts on it. */
function iosDelivery(
  n: ResponseBodyV2DecodedPayload,
  tx: JWSTransactionDecodedPayload | null,
  renewal: JWSRenewalInfoDecodedPayload | null,
  payload: unknown,
  receivedAt: Date,
): VerifiedDelivery {
  const type = [n.notificationType, n.subtype].filter(Boolean).join('.');
  const events = normaliseIos(n, tx, renewal, receivedAt);
  return {
    eventId: n.notificationUUID!,
    eventType: type || 'unknown',
    eventTime: iosEventTime(n, receivedAt).eventTime,
    payload,
    acts: events.length > 0,
    normalise: async () => events,
  };
}

/**
 * App Store Server Notifications V2: the signedPayload, and the signed transaction and renewal info it
 * carries, verified by the App Store library's SignedDataVerifier against ios_store_root_certificates
 * (certificate chain with Apple's marker extensions, validity now, the leaf's and intermediate's OCSP
 * status, ES256 signature), for the configured bundle id and environment.
 */
export const iosStoreWebhook: WebhookAdapter = {
  source: 'ios_store',
  async verify(req, ctx) {
    let signedPayload: unknown;
    try {
      signedPayload = (JSON.parse(req.rawBody.toString('utf8')) as { signedPayload?: unknown }).signedPayload;
    } catch {
      signedPayload = undefined;
    }
    if (typeof signedPayload !== 'string' || signedPayload === '') throw authError(400, 'Missing signedPayload');
    const verifier = await verifierFor(ctx.settings);
    if (!verifier) throw authError(401, 'iOS store notifications are not configured');
    let notification: ResponseBodyV2DecodedPayload;
    let transaction: JWSTransactionDecodedPayload | null = null;
    let renewal: JWSRenewalInfoDecodedPayload | null = null;
    try {
      notification = await verifier.verifyAndDecodeNotification(signedPayload);
      if (notification.data?.signedTransactionInfo) transaction = await verifier.verifyAndDecodeTransaction(notification.data.signedTransactionInfo);
      if (notification.data?.signedRenewalInfo) renewal = await verifier.verifyAndDecodeRenewalInfo(notification.data.signedRenewalInfo);
    } catch (err) {
      // The certificates' OCSP responder could not be asked: the signature is not known to be bad, so
      // the App Store is told to retry (any non-2xx answer makes it redeliver) rather than refused.
      const { VerificationException, VerificationStatus } = await appStoreLibrary();
      if (err instanceof VerificationException && err.status === VerificationStatus.RETRYABLE_VERIFICATION_FAILURE) {
        throw new ApiError(500, 'TransactionError', 'The iOS store signature could not be checked now (certificate status unavailable); it will be accepted on retry');
      }
      throw authError(401, 'Invalid iOS store signature');
    }
    if (!notification.notificationUUID) throw authError(400, 'iOS store notification has no notificationUUID');
    const payload = { notification: { ...notification, data: { ...notification.data, signedTransactionInfo: undefined, signedRenewalInfo: undefined } }, transaction, renewal };
    return iosDelivery(notification, transaction, renewal, payload, ctx.clock.now());
  },
  restore(logged) {
    const payload = logged.payload as { notification: ResponseBodyV2DecodedPayload; transaction: JWSTransactionDecodedPayload | null; renewal?: JWSRenewalInfoDecodedPayload | null };
    return iosDelivery(payload.notification, payload.transaction ?? null, payload.renewal ?? null, logged.payload, logged.eventTime);
  },
};
