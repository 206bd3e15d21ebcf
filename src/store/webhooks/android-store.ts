import { OAuth2Client } from 'google-auth-library';
import { authError } from '../../http/errors.js';
import { header, type StoreContext, type StoreEvent, type WebhookAdapter } from '../events.js';

const GOOGLE_ISSUERS = ['accounts.google.com', 'https://accounts.google.com'];
const oauth = new OAuth2Client();

type Obj = Record<string, any>;
type Kind = StoreEvent['kind'];

/** SubscriptionNotification.notificationType as the store reads it; null: not acted on. */
export function androidEventKind(type: number): Kind | null {
  switch (type) {
    case 4: // SUBSCRIPTION_PURCHASED
      return 'purchase';
    case 1: // SUBSCRIPTION_RECOVERED
    case 2: // SUBSCRIPTION_RENEWED
      return 'renewal';
    case 3: // SUBSCRIPTION_CANCELED: access continues until expiry
      return 'cancellation_scheduled';
    case 7: // SUBSCRIPTION_RESTARTED
      return 'cancellation_undone';
    case 12: // SUBSCRIPTION_REVOKED
      return 'refund';
    case 13: // SUBSCRIPTION_EXPIRED
      return 'expiry';
    default:
      return null;
  }
}

/** The Play API subscription states that confirm each kind of notification. */
const STATES_FOR: Record<Kind, string[]> = {
  purchase: ['SUBSCRIPTION_STATE_ACTIVE', 'SUBSCRIPTION_STATE_IN_GRACE_PERIOD', 'SUBSCRIPTION_STATE_CANCELED'],
  renewal: ['SUBSCRIPTION_STATE_ACTIVE', 'SUBSCRIPTION_STATE_IN_GRACE_PERIOD', 'SUBSCRIPTION_STATE_CANCELED'],
  cancellation_undone: ['SUBSCRIPTION_STATE_ACTIVE', 'SUBSCRIPTION_STATE_IN_GRACE_PERIOD'],
  cancellation_scheduled: ['SUBSCRIPTION_STATE_CANCELED'],
  cancellation: ['SUBSCRIPTION_STATE_EXPIRED'],
  expiry: ['SUBSCRIPTION_STATE_EXPIRED'],
  refund: ['SUBSCRIPTION_STATE_EXPIRED', 'SUBSCRIPTION_STATE_CANCELED'],
};

/** The subscription's state from the Play Developer API (purchases.subscriptionsv2.get) at android_store_api_base. */
export async function readPlaySubscription(ctx: StoreContext, packageName: string, purchaseToken: string): Promise<Obj> {
  const base = (ctx.settings.string('android_store_api_base') || 'https://androidpublisher.googleapis.com').replace(/\/+$/, '');
  const url = `${base}/androidpublisher/v3/applications/${encodeURIComponent(packageName)}/purchases/subscriptionsv2/tokens/${encodeURIComponent(purchaseToken)}`;
  const res = await fetch(url, {
    headers: { authorization: `Bearer ${await ctx.deps.androidAccessToken(ctx.settings)}`, accept: 'application/json' },
    signal: AbortSignal.timeout(20_000),
  });
  if (!res.ok) throw new Error(`Play Developer API answered ${res.status}`);
  return (await res.json()) as Obj;
}

async function normaliseAndroid(n: Obj, ctx: StoreContext, eventTime: Date): Promise<StoreEvent[]> {
  const base = { source: 'android_store' as const, eventTime, periodEnd: null };
  if (n.voidedPurchaseNotification) {
    const v = n.voidedPurchaseNotification as Obj;
    // productType 1 is a subscription; one-time products grant no tier.
    if (typeof v.purchaseToken !== 'string' || Number(v.productType) !== 1) return [];
    // Like every other notification, a refund is acted on only when the Play API confirms it.
    const state = await readPlaySubscription(ctx, String(n.packageName), v.purchaseToken);
    if (!STATES_FOR.refund.includes(String(state.subscriptionState))) return [];
    return [{ ...base, kind: 'refund', reference: v.purchaseToken, user: {}, product: {} }];
  }
  const s = n.subscriptionNotification as Obj | undefined;
  if (!s || typeof s.purchaseToken !== 'string') return [];
  const kind = androidEventKind(Number(s.notificationType));
  if (!kind) return [];
  const state = await readPlaySubscription(ctx, String(n.packageName), s.purchaseToken);
  // The push body is not signed (the bearer token is): act only when the Play API's state agrees with it.
  if (!STATES_FOR[kind].includes(String(state.subscriptionState))) return [];
  const line = (state.lineItems?.[0] ?? {}) as Obj;
  const expiry = typeof line.expiryTime === 'string' ? new Date(line.expiryTime) : null;
  return [
    {
      ...base,
      kind,
      reference: s.purchaseToken,
      user: { accountToken: state.externalAccountIdentifiers?.obfuscatedExternalAccountId ?? null },
      product: { providerProductId: typeof line.productId === 'string' ? line.productId : (s.subscriptionId ?? null) },
      periodEnd: expiry && !Number.isNaN(expiry.getTime()) ? expiry : null,
    },
  ];
}

function sameText(a: string, b: string): boolean {
  return a.toLowerCase() === b.trim().toLowerCase();
}

/**
 * Real-time developer notifications by Pub/Sub push: the push's Authorization bearer is a Google OIDC
 * token verified with google-auth-library for android_store_push_audience and issued to the push
 * subscription's service account (android_store_push_email); the message names the purchase token,
 * whose state is then read from the Play Developer API.
 */
export const androidStoreWebhook: WebhookAdapter = {
  source: 'android_store',
  async verify(req, ctx) {
    const authorization = header(req, 'authorization');
    const token = authorization?.match(/^Bearer\s+(\S+)$/i)?.[1];
    if (!token) throw authError(400, 'Missing Authorization bearer token');
    const audience = ctx.settings.string('android_store_push_audience');
    const sender = ctx.settings.string('android_store_push_email');
    if (!audience || !sender) throw authError(401, 'Android store notifications are not configured');
    let claims: Obj | undefined;
    try {
      const certs = await ctx.deps.googleOidcCertificates();
      claims = (await oauth.verifySignedJwtWithCertsAsync(token, certs, audience, GOOGLE_ISSUERS)).getPayload();
    } catch {
      throw authError(401, 'Invalid Android store push token');
    }
    // Any Google Cloud project can mint a Google-signed token for our audience: only the push
    // subscription's own service account is believed.
    if (claims?.email_verified !== true || !sameText(String(claims.email ?? ''), sender)) {
      throw authError(401, 'Invalid Android store push token');
    }
    let message: Obj;
    let notification: Obj;
    try {
      message = (JSON.parse(req.rawBody.toString('utf8')) as Obj).message as Obj;
      notification = JSON.parse(Buffer.from(String(message.data), 'base64').toString('utf8')) as Obj;
    } catch {
      throw authError(400, 'Malformed Pub/Sub push message');
    }
    const eventId = String(message.messageId ?? message.message_id ?? '');
    if (!eventId) throw authError(400, 'Pub/Sub push message has no messageId');
    const millis = Number(notification.eventTimeMillis);
    const eventTime = Number.isFinite(millis) && millis > 0 ? new Date(millis) : ctx.clock.now();
    const type = notification.subscriptionNotification
      ? `subscription.${notification.subscriptionNotification.notificationType}`
      : notification.voidedPurchaseNotification
        ? 'voided_purchase'
        : notification.testNotification
          ? 'test'
          : 'other';
    const ours = notification.packageName === ctx.settings.string('android_store_package_name');
    return {
      eventId,
      eventType: type,
      eventTime,
      payload: { message: { messageId: eventId, publishTime: message.publishTime ?? null }, notification },
      normalise: async (c) => (ours ? normaliseAndroid(notification, c, eventTime) : []),
    };
  },
};
