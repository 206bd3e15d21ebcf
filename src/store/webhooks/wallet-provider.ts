import { X509Certificate, verify as verifySignature } from 'node:crypto';
import { crc32 } from 'node:zlib';
import { authError } from '../../http/errors.js';
import type { Clock } from '../../lib/clock.js';
import { graceAfter, header, type StoreContext, type StoreEvent, type VerifiedDelivery, type WebhookAdapter } from '../events.js';
import { findItemById } from '../orders.js';
import { paymentByReference } from '../payments.js';

/** Seconds a transmission time may differ from our clock (each provider retry is a new transmission). */
export const WALLET_TOLERANCE_SECONDS = 300;
const CERT_CACHE_MS = 24 * 3600_000;
const CERT_CACHE_MAX = 32;

/** The provider's own certificate domain: the default of wallet_provider_cert_hosts. */
export const WALLET_CERT_HOSTS_DEFAULT = 'paypal.com';

/**
 * Whether a certificate URL is on a trusted certificate host (wallet_provider_cert_hosts, DESIGN 14): a
 * list of entries separated by commas or spaces. A bare domain trusts https URLs on that domain or its
 * subdomains on the default port; an origin (scheme://host[:port]) trusts exactly that origin, so a
 * sandbox or a local fake stands in by setting alone. Credentials in the URL are never trusted.
 */
export function isProviderCertificateUrl(raw: string, hosts: string = WALLET_CERT_HOSTS_DEFAULT): boolean {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return false;
  }
  if (url.username !== '' || url.password !== '') return false;
  const host = url.hostname.toLowerCase();
  for (const entry of (hosts.trim() || WALLET_CERT_HOSTS_DEFAULT).split(/[\s,]+/).filter(Boolean)) {
    if (entry.includes('://')) {
      let origin: URL;
      try {
        origin = new URL(entry);
      } catch {
        continue;
      }
      if ((origin.protocol === 'https:' || origin.protocol === 'http:') && url.origin === origin.origin) return true;
      continue;
    }
    const domain = entry.toLowerCase().replace(/^\.+/, '');
    if (url.protocol === 'https:' && url.port === '' && (host === domain || host.endsWith(`.${domain}`))) return true;
  }
  return false;
}

const certCache = new Map<string, { cert: X509Certificate; fetchedAt: number }>();

async function providerCertificate(url: string, ctx: StoreContext): Promise<X509Certificate> {
  const cached = certCache.get(url);
  if (cached && ctx.clock.nowMs() - cached.fetchedAt < CERT_CACHE_MS) return cached.cert;
  const cert = new X509Certificate(await ctx.deps.fetchWalletCertificate(url));
  if (certCache.size >= CERT_CACHE_MAX) certCache.delete(certCache.keys().next().value!);
  certCache.set(url, { cert, fetchedAt: ctx.clock.nowMs() });
  return cert;
}

function validAt(cert: X509Certificate, clock: Clock): boolean {
  const now = clock.nowMs();
  return new Date(cert.validFrom).getTime() <= now && now <= new Date(cert.validTo).getTime();
}

type Obj = Record<string, any>;
const toMinor = (v: unknown): number | null => {
  const n = typeof v === 'string' || typeof v === 'number' ? Number(v) : NaN;
  return Number.isFinite(n) ? Math.round(n * 100) : null;
};
const dateOrNull = (v: unknown): Date | null => (typeof v === 'string' && !Number.isNaN(Date.parse(v)) ? new Date(v) : null);

/**
 * The event's time from the signed body: the resource's own status change (status_update_time), else its
 * last update, else the event's creation, else the resource's creation. Only when the body states none
 * is the receipt time used, flagged so that it never outranks a signed time.
 */
export function walletEventTime(event: Obj, receivedAt: Date): { eventTime: Date; receiptTime?: true } {
  const r = (event.resource ?? {}) as Obj;
  // A failed payment leaves the subscription's status_update_time as it was: the event's own time says when it failed.
  const failed = event.event_type === 'BILLING.SUBSCRIPTION.PAYMENT.FAILED' ? dateOrNull(event.create_time) : null;
  const stated = failed ?? dateOrNull(r.status_update_time) ?? dateOrNull(r.update_time) ?? dateOrNull(event.create_time) ?? dateOrNull(r.create_time);
  return stated ? { eventTime: stated } : { eventTime: receivedAt, receiptTime: true };
}

/** The event types the store acts on. */
const WALLET_EVENT_TYPES = new Set([
  'BILLING.SUBSCRIPTION.ACTIVATED',
  'BILLING.SUBSCRIPTION.SUSPENDED',
  'BILLING.SUBSCRIPTION.RE-ACTIVATED',
  'BILLING.SUBSCRIPTION.CANCELLED',
  'BILLING.SUBSCRIPTION.EXPIRED',
  'BILLING.SUBSCRIPTION.PAYMENT.FAILED',
  'PAYMENT.SALE.COMPLETED',
  'PAYMENT.SALE.REFUNDED',
  'PAYMENT.CAPTURE.REFUNDED',
]);

function walletActsOn(event: Obj): boolean {
  if (!WALLET_EVENT_TYPES.has(String(event.event_type))) return false;
  const r = (event.resource ?? {}) as Obj;
  if (event.event_type === 'PAYMENT.SALE.COMPLETED') return typeof r.billing_agreement_id === 'string';
  if (event.event_type === 'PAYMENT.SALE.REFUNDED' || event.event_type === 'PAYMENT.CAPTURE.REFUNDED') return typeof r.billing_agreement_id === 'string' || refundedPaymentId(r) !== null;
  return true;
}

/**
 * The payment a refund returns, as the provider names it: a v1 sale refund's sale_id (its "sale" link in
 * older samples), a v2 refund's capture (its "up" link).
 */
function refundedPaymentId(r: Obj): string | null {
  if (typeof r.sale_id === 'string' && r.sale_id !== '') return r.sale_id;
  const links = Array.isArray(r.links) ? (r.links as Obj[]) : [];
  for (const l of links) {
    const m = typeof l.href === 'string' ? /\/v1\/payments\/sale\/([^/?#]+)|\/v2\/payments\/captures\/([^/?#]+)$/.exec(l.href) : null;
    if (m && (l.rel === 'sale' || l.rel === 'up')) return decodeURIComponent((m[1] ?? m[2])!);
  }
  return null;
}

/** A money amount in either of the provider's shapes ({total, currency} or {value, currency_code}), as positive minor units. */
function moneyOf(a: unknown): { minor: number | null; currency: string | null } {
  const o = (a ?? {}) as Obj;
  const minor = toMinor(o.total ?? o.value);
  const currency = typeof o.currency === 'string' ? o.currency : typeof o.currency_code === 'string' ? o.currency_code : null;
  // Older samples report a refund's total as a negative amount.
  return { minor: minor === null ? null : Math.abs(minor), currency: currency ? currency.toLowerCase() : null };
}

/**
 * The subscription and paid amount of a refunded payment: the payment as we recorded it (a renewal's
 * sale, or the capture on the order), else as the provider's sale API states it (its billing agreement
 * is the subscription).
 */
async function resolveRefundedPayment(ctx: StoreContext, paymentId: string): Promise<{ subscriptionId: string | null; paid: number | null }> {
  const recorded = await paymentByReference(ctx.db, 'wallet_provider', paymentId);
  if (recorded) {
    const item = await findItemById(ctx.db, recorded.orderItemId, { lock: false });
    if (item?.odi_subscription_reference) return { subscriptionId: item.odi_subscription_reference, paid: recorded.amount };
  }
  const order = await ctx.db
    .selectFrom('ord_orders')
    .innerJoin('odi_order_items', 'odi_ord_order_id', 'ord_order_id')
    .select(['odi_subscription_reference', 'odi_price'])
    .where('ord_paypal_order_id', '=', paymentId)
    .where('odi_payment_source', '=', 'wallet_provider')
    .executeTakeFirst();
  if (order?.odi_subscription_reference) return { subscriptionId: order.odi_subscription_reference, paid: order.odi_price === null ? null : Number(order.odi_price) };
  const sale = await ctx.deps.walletProvider(ctx.settings).getSale(paymentId);
  return { subscriptionId: sale?.billingAgreementId ?? null, paid: sale?.amount ?? null };
}

/**
 * Wallet-provider events (PayPal Subscriptions): BILLING.SUBSCRIPTION.ACTIVATED is a purchase;
 * PAYMENT.SALE.COMPLETED on a subscription a renewal (its period end read back from the provider), which
 * also ends a billing issue; BILLING.SUBSCRIPTION.PAYMENT.FAILED puts it in grace for
 * wallet_provider_grace_days (DESIGN 14), .SUSPENDED on hold (a subscription the member cancelled stays
 * cancelled: our end-of-period cancel suspends it), .RE-ACTIVATED recovers it (or undoes a cancellation);
 * BILLING.SUBSCRIPTION.CANCELLED a cancellation at the period end, .EXPIRED an expiry; PAYMENT.SALE.REFUNDED a
 * refund. custom_id carries the user's store account token; plan_id names the product (pro_wallet_plan_id).
 */
export async function normaliseWalletEvent(event: Obj, ctx: StoreContext, receivedAt: Date): Promise<StoreEvent[]> {
  const r = (event.resource ?? {}) as Obj;
  const base = { source: 'wallet_provider' as const, ...walletEventTime(event, receivedAt) };
  const subscription = (kind: StoreEvent['kind']): StoreEvent => ({
    ...base,
    kind,
    reference: typeof r.id === 'string' ? r.id : null,
    user: { accountToken: typeof r.custom_id === 'string' ? r.custom_id : null },
    product: { providerProductId: typeof r.plan_id === 'string' ? r.plan_id : null },
    periodEnd: dateOrNull(r.billing_info?.next_billing_time),
  });
  switch (event.event_type) {
    case 'BILLING.SUBSCRIPTION.ACTIVATED':
      return [subscription('purchase')];
    case 'BILLING.SUBSCRIPTION.PAYMENT.FAILED': {
      // Grace counts from the first failure: later retries keep it (the processor decides).
      const failedAt = dateOrNull(r.billing_info?.last_failed_payment?.time) ?? base.eventTime;
      return [{ ...subscription('in_grace'), periodEnd: null, graceUntil: graceAfter(failedAt, ctx.settings.int('wallet_provider_grace_days')) }];
    }
    case 'BILLING.SUBSCRIPTION.SUSPENDED':
      // The provider gave up retrying (or the member's own end-of-period cancel, which stays cancelled).
      return [{ ...subscription('on_hold'), periodEnd: null }];
    case 'BILLING.SUBSCRIPTION.RE-ACTIVATED':
      return [subscription('recovery')];
    case 'BILLING.SUBSCRIPTION.CANCELLED':
      // A cancel made at the provider ends the subscription at the paid period's end (DESIGN 14); our own
      // immediate cancel has already ended it here, so its echo changes nothing.
      return [subscription('cancellation_scheduled')];
    case 'BILLING.SUBSCRIPTION.EXPIRED':
      return [subscription('expiry')];
    case 'PAYMENT.SALE.COMPLETED': {
      if (typeof r.billing_agreement_id !== 'string') return [];
      const sub = await ctx.deps.walletProvider(ctx.settings).getSubscription(r.billing_agreement_id);
      return [
        {
          ...base,
          kind: 'renewal',
          reference: sub.id,
          user: { accountToken: sub.customId },
          product: { providerProductId: sub.planId },
          periodEnd: sub.nextBillingTime,
          amount: toMinor(r.amount?.total),
          currency: typeof r.amount?.currency === 'string' ? r.amount.currency.toLowerCase() : null,
          payment: { saleId: typeof r.id === 'string' ? r.id : null },
        },
      ];
    }
    case 'PAYMENT.SALE.REFUNDED':
    case 'PAYMENT.CAPTURE.REFUNDED': {
      // PayPal's own shapes name the sale (sale_id, parent_payment) or the capture (the "up" link), and
      // not the subscription: the payment is resolved to its subscription.
      const paymentId = refundedPaymentId(r);
      const refund = moneyOf(r.amount);
      // The newer samples state the payment's whole refunded amount so far.
      const soFar = r.total_refunded_amount ? moneyOf(r.total_refunded_amount).minor : null;
      let subscriptionId = typeof r.billing_agreement_id === 'string' ? r.billing_agreement_id : null;
      let paid: number | null = null;
      if (paymentId !== null) {
        const resolved = await resolveRefundedPayment(ctx, paymentId);
        subscriptionId ??= resolved.subscriptionId;
        paid = resolved.paid;
      }
      if (subscriptionId === null) return [];
      const amount = soFar ?? refund.minor;
      return [
        {
          ...base,
          kind: 'refund',
          reference: subscriptionId,
          user: {},
          product: {},
          periodEnd: null,
          amount,
          currency: refund.currency,
          refundWhole: paid !== null && amount !== null ? amount >= paid : null,
        },
      ];
    }
    default:
      return [];
  }
}

/**
 * The provider's transmission signature: RSA-SHA256 over transmission_id|transmission_time|webhook_id|
 * crc32(body), checked against the provider certificate named by PAYPAL-CERT-URL, fetched only from the
 * provider's domain, valid now, and cached.
 */
export const walletProviderWebhook: WebhookAdapter = {
  source: 'wallet_provider',
  async verify(req, ctx) {
    const id = header(req, 'paypal-transmission-id');
    const time = header(req, 'paypal-transmission-time');
    const sig = header(req, 'paypal-transmission-sig');
    const certUrl = header(req, 'paypal-cert-url');
    const algo = header(req, 'paypal-auth-algo');
    if (!id || !time || !sig || !certUrl) throw authError(400, 'Missing wallet provider transmission headers');
    const webhookId = ctx.settings.string('wallet_provider_webhook_id');
    if (!webhookId) throw authError(401, 'Wallet provider webhooks are not configured');
    if (algo !== undefined && algo !== 'SHA256withRSA') throw authError(401, 'Unsupported wallet provider signature algorithm');
    const sent = Date.parse(time);
    if (Number.isNaN(sent) || Math.abs(ctx.clock.nowMs() - sent) > WALLET_TOLERANCE_SECONDS * 1000) throw authError(401, 'Wallet provider transmission time is outside the tolerance');
    if (!isProviderCertificateUrl(certUrl, ctx.settings.string('wallet_provider_cert_hosts'))) throw authError(401, 'Wallet provider certificate is not on the provider domain');
    let cert: X509Certificate;
    try {
      cert = await providerCertificate(certUrl, ctx);
    } catch {
      throw authError(401, 'Wallet provider certificate could not be loaded');
    }
    if (!validAt(cert, ctx.clock)) throw authError(401, 'Wallet provider certificate is not valid now');
    const message = `${id}|${time}|${webhookId}|${crc32(req.rawBody) >>> 0}`;
    let verified = false;
    try {
      verified = verifySignature('sha256', Buffer.from(message), cert.publicKey, Buffer.from(sig, 'base64'));
    } catch {
      verified = false;
    }
    if (!verified) throw authError(401, 'Invalid wallet provider signature');
    let event: Obj;
    try {
      event = JSON.parse(req.rawBody.toString('utf8')) as Obj;
    } catch {
      throw authError(400, 'Wallet provider body is not JSON');
    }
    if (typeof event.id !== 'string' || typeof event.event_type !== 'string') throw authError(400, 'Wallet provider event has no id or type');
    return walletDelivery(event, ctx.clock.now());
  },
  restore: (logged) => walletDelivery(logged.payload as Obj, logged.eventTime),
};

/** A verified event (or one restored from its log row) as the store acts on it. */
function walletDelivery(event: Obj, receivedAt: Date): VerifiedDelivery {
  return {
    eventId: String(event.id),
    eventType: String(event.event_type),
    eventTime: walletEventTime(event, receivedAt).eventTime,
    payload: event,
    acts: walletActsOn(event),
    normalise: (c) => normaliseWalletEvent(event, c, receivedAt),
  };
}
