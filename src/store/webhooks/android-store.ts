import type { OAuth2Client } from 'google-auth-library';
import { authError } from '../../http/errors.js';
import { header, type LoggedDelivery, type StoreContext, type StoreEvent, type VerifiedDelivery, type WebhookAdapter } from '../events.js';
import { findItemByReference } from '../orders.js';

const GOOGLE_ISSUERS = ['accounts.google.com', 'https://accounts.google.com'];
/** Made at the first push: google-auth-library is loaded then, not at start (about 0.3 s). */
let oauth: Promise<OAuth2Client> | undefined;
const oauthClient = (): Promise<OAuth2Client> => (oauth ??= import('google-auth-library').then(({ OAuth2Client: Client }) => new Client()));

type Obj = Record<string, any>;
type Kind = StoreEvent['kind'];

/** SubscriptionNotification.notificationType as the store reads it; null: not acted on. */
export function androidEventKind(type: number): AndroidKind | null {
  switch (type) {
    case 4: // SUBSCRIPTION_PURCHASED
      return 'purchase';
    case 1: // SUBSCRIPTION_RECOVERED: a renewal after account hold, which recovers the subscription
    case 2: // SUBSCRIPTION_RENEWED (during grace too: a renewal ends a billing issue)
      return 'renewal';
    case 3: // SUBSCRIPTION_CANCELED: access continues until expiry
      return 'cancellation_scheduled';
    case 5: // SUBSCRIPTION_ON_HOLD
      return 'on_hold';
    case 6: // SUBSCRIPTION_IN_GRACE_PERIOD
      return 'in_grace';
    case 7: // SUBSCRIPTION_RESTARTED: active again (a cancellation undone, or back from a billing issue)
      return 'recovery';
    case 10: // SUBSCRIPTION_PAUSED
      return 'paused';
    case 12: // SUBSCRIPTION_REVOKED
      return 'refund';
    case 13: // SUBSCRIPTION_EXPIRED
      return 'expiry';
    default:
      return null;
  }
}

/** The kinds a notification can be read as (never a delayed card payment). */
type AndroidKind = Exclude<Kind, 'payment_pending' | 'payment_failed' | 'product_change' | 'product_change_scheduled'>;

/** The Play API subscription states that confirm each kind of notification. */
const STATES_FOR: Record<AndroidKind, string[]> = {
  purchase: ['SUBSCRIPTION_STATE_ACTIVE', 'SUBSCRIPTION_STATE_IN_GRACE_PERIOD', 'SUBSCRIPTION_STATE_CANCELED'],
  renewal: ['SUBSCRIPTION_STATE_ACTIVE', 'SUBSCRIPTION_STATE_IN_GRACE_PERIOD', 'SUBSCRIPTION_STATE_CANCELED'],
  cancellation_undone: ['SUBSCRIPTION_STATE_ACTIVE', 'SUBSCRIPTION_STATE_IN_GRACE_PERIOD'],
  cancellation_scheduled: ['SUBSCRIPTION_STATE_CANCELED'],
  cancellation: ['SUBSCRIPTION_STATE_EXPIRED'],
  expiry: ['SUBSCRIPTION_STATE_EXPIRED'],
  refund: ['SUBSCRIPTION_STATE_EXPIRED', 'SUBSCRIPTION_STATE_CANCELED'],
  in_grace: ['SUBSCRIPTION_STATE_IN_GRACE_PERIOD'],
  on_hold: ['SUBSCRIPTION_STATE_ON_HOLD'],
  paused: ['SUBSCRIPTION_STATE_PAUSED'],
  recovery: ['SUBSCRIPTION_STATE_ACTIVE'],
};

/**
 * The subscription's state from the Play Developer API (purchases.subscriptionsv2.get) at
 * android_store_api_base. A 401 refreshes the access token once and retries; a second 401 is an error.
 */
export async function readPlaySubscription(ctx: StoreContext, packageName: string, purchaseToken: string): Promise<Obj> {
  const base = (ctx.settings.string('android_store_api_base') || 'https://androidpublisher.googleapis.com').replace(/\/+$/, '');
  const url = `${base}/androidpublisher/v3/applications/${encodeURIComponent(packageName)}/purchases/subscriptionsv2/tokens/${encodeURIComponent(purchaseToken)}`;
  const send = async (refresh: boolean) =>
    fetch(url, {
      headers: { authorization: `Bearer ${await ctx.deps.androidAccessToken(ctx.settings, { refresh })}`, accept: 'application/json' },
      signal: AbortSignal.timeout(20_000),
    });
  let res = await send(false);
  // The API no longer accepts our token (revoked or expired early): a new one, and the call once more.
  if (res.status === 401) {
    await res.body?.cancel();
    res = await send(true);
  }
  if (!res.ok) throw new Error(`Play Developer API answered ${res.status}`);
  return (await res.json()) as Obj;
}

const dateOf = (v: unknown): Date | null => (typeof v === 'string' && !Number.isNaN(Date.parse(v)) ? new Date(v) : null);

/**
 * The event's time as the Play API states it (the push body's eventTimeMillis is not signed and is never
 * used): a purchase's startTime; an expiry's or revocation's expiryTime; a user's cancellation's
 * cancelTime; a renewal's new period began when the period recorded from an earlier read ended, and a
 * grace period or a hold began when the renewal failed, at that same recorded end. The
 * Play API states no time for a restart or a system cancellation: their receipt time is the fallback.
 */
async function playEventTime(ctx: StoreContext, kind: AndroidKind, token: string, state: Obj, expiry: Date | null): Promise<Date | null> {
  switch (kind) {
    case 'purchase':
      return dateOf(state.startTime);
    case 'expiry':
    case 'cancellation':
    case 'refund':
      return expiry;
    case 'cancellation_scheduled':
      return dateOf(state.canceledStateContext?.userInitiatedCancellation?.cancelTime);
    case 'in_grace':
    case 'on_hold': {
      // The renewal that failed was due when the recorded period ended.
      const item = await findItemByReference(ctx.db, 'android_store', token, { lock: false });
      return item?.odi_subscription_period_end ?? null;
    }
    case 'renewal': {
      const item = await findItemByReference(ctx.db, 'android_store', token, { lock: false });
      const previousEnd = item?.odi_subscription_period_end ?? null;
      return previousEnd && expiry && previousEnd.getTime() < expiry.getTime() ? previousEnd : null;
    }
    default:
      return null;
  }
}

/** The subscription's latest line item and its expiry, as the Play API reads them. */
function lineOf(state: Obj): { line: Obj; expiry: Date | null } {
  const line = (state.lineItems?.[0] ?? {}) as Obj;
  return { line, expiry: dateOf(line.expiryTime) };
}

/** Whether the store acts on a notification (decided from the push alone, before the Play API is asked). */
function actsOn(n: Obj, packageName: string): boolean {
  if (n.packageName !== packageName) return false;
  const v = n.voidedPurchaseNotification as Obj | undefined;
  if (v) return typeof v.purchaseToken === 'string' && Number(v.productType) === 1;
  const s = n.subscriptionNotification as Obj | undefined;
  return !!s && typeof s.purchaseToken === 'string' && androidEventKind(Number(s.notificationType)) !== null;
}

async function normaliseAndroid(n: Obj, ctx: StoreContext, receivedAt: Date): Promise<StoreEvent[]> {
  if (!actsOn(n, ctx.settings.string('android_store_package_name'))) return [];
  const voided = n.voidedPurchaseNotification as Obj | undefined;
  const s = (voided ?? n.subscriptionNotification) as Obj;
  const token = String(s.purchaseToken);
  // productType 1 (a subscription) is checked by actsOn; one-time products grant no tier.
  const kind: AndroidKind = voided ? 'refund' : androidEventKind(Number(s.notificationType))!;
  const state = await readPlaySubscription(ctx, String(n.packageName), token);
  // The push body is not signed (the bearer token is): act only when the Play API's state agrees with it.
  if (!STATES_FOR[kind].includes(String(state.subscriptionState))) return [];
  const { line, expiry } = lineOf(state);
  const stated = await playEventTime(ctx, kind, token, state, expiry);
  // A purchase that replaces one of ours (an upgrade or downgrade in Play: linkedPurchaseToken) is that
  // subscription's product change, taking effect now (DESIGN 14).
  const linked = kind === 'purchase' && typeof state.linkedPurchaseToken === 'string' && state.linkedPurchaseToken !== '' ? String(state.linkedPurchaseToken) : null;
  const replaces = linked !== null && (await findItemByReference(ctx.db, 'android_store', linked, { lock: false })) ? linked : null;
  return [
    {
      kind: replaces ? 'product_change' : kind,
      ...(replaces ? { replaces } : {}),
      source: 'android_store',
      reference: token,
      eventTime: stated ?? receivedAt,
      ...(stated ? {} : { receiptTime: true }),
      user: voided ? {} : { accountToken: state.externalAccountIdentifiers?.obfuscatedExternalAccountId ?? null },
      product: voided ? {} : { providerProductId: typeof line.productId === 'string' ? line.productId : (s.subscriptionId ?? null) },
      // In grace the line item's expiry is the grace period's end; a failure leaves the recorded period as it was.
      periodEnd: voided || kind === 'in_grace' || kind === 'on_hold' || kind === 'paused' ? null : expiry,
      ...(kind === 'in_grace' ? { graceUntil: expiry } : {}),
      ...(kind === 'paused' ? { resumeTime: dateOf(state.pausedStateContext?.autoResumeTime) } : {}),
    },
  ];
}

/** A push as the store keeps it: the notification, and when it was received (its log time). */
function androidDelivery(eventId: string, notification: Obj, payload: unknown, receivedAt: Date, packageName: string): VerifiedDelivery {
  const type = notification.subscriptionNotification
    ? `subscription.${notification.subscriptionNotification.notificationType}`
    : notification.voidedPurchaseNotification
      ? 'voided_purchase'
      : notification.testNotification
        ? 'test'
        : 'other';
  return {
    eventId,
    eventType: type,
    eventTime: receivedAt,
    payload,
    acts: actsOn(notification, packageName),
    normalise: (c) => normaliseAndroid(notification, c, receivedAt),
  };
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
      const certs = await ctx.deps.googleOidcCertificates(ctx.settings);
      claims = (await (await oauthClient()).verifySignedJwtWithCertsAsync(token, certs, audience, GOOGLE_ISSUERS)).getPayload();
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
    // The push's eventTimeMillis is unsigned: the log keeps the receipt time, and the events take the Play API's.
    const receivedAt = ctx.clock.now();
    const payload = { message: { messageId: eventId, publishTime: message.publishTime ?? null }, notification };
    return androidDelivery(eventId, notification, payload, receivedAt, ctx.settings.string('android_store_package_name'));
  },
  restore(logged: LoggedDelivery, ctx) {
    const payload = logged.payload as Obj;
    return androidDelivery(logged.eventId, (payload.notification ?? {}) as Obj, payload, logged.eventTime, ctx.settings.string('android_store_package_name'));
  },
};
