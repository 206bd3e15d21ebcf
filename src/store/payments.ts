import type { Kysely } from 'kysely';
import type { DB, PaymentSource } from '../db/types.js';

/**
 * The payments that paid for a subscription's periods (sbp_subscription_payments, DESIGN 14): the
 * period's own payment (a checkout, a renewal invoice, a wallet sale) and an upgrade's prorated charge.
 * An immediate prorated cancellation refunds each one's unused share; a wallet refund that names only
 * its sale finds its subscription here.
 */
export interface SubscriptionPayment {
  id: number;
  orderItemId: number;
  kind: 'period' | 'upgrade';
  paymentReference: string | null;
  invoiceReference: string | null;
  /** Minor units. */
  amount: number;
  currency: string;
  coversFrom: Date;
  coversUntil: Date | null;
  refunded: number;
}

export interface NewSubscriptionPayment {
  orderItemId: number;
  source: PaymentSource;
  kind: 'period' | 'upgrade';
  paymentReference?: string | null;
  invoiceReference?: string | null;
  amount: number;
  currency: string;
  coversFrom: Date;
  coversUntil: Date | null;
}

const MAX_REFERENCE = 255;
const ref = (v: string | null | undefined) => (v ? v.slice(0, MAX_REFERENCE) : null);

/** Records a payment once: a payment the provider names again (a redelivered renewal) is kept as first recorded. */
export async function recordSubscriptionPayment(db: Kysely<DB>, p: NewSubscriptionPayment): Promise<number | null> {
  if (!Number.isSafeInteger(p.amount) || p.amount < 0) return null;
  const paymentReference = ref(p.paymentReference);
  if (paymentReference) {
    const existing = await db
      .selectFrom('sbp_subscription_payments')
      .select('sbp_subscription_payment_id')
      .where('sbp_source', '=', p.source)
      .where('sbp_payment_reference', '=', paymentReference)
      .executeTakeFirst();
    if (existing) return Number(existing.sbp_subscription_payment_id);
  }
  const row = await db
    .insertInto('sbp_subscription_payments')
    .values({
      sbp_odi_order_item_id: p.orderItemId,
      sbp_source: p.source,
      sbp_kind: p.kind,
      sbp_payment_reference: paymentReference,
      sbp_invoice_reference: ref(p.invoiceReference),
      sbp_amount: p.amount,
      sbp_currency: p.currency.toLowerCase().slice(0, 3),
      sbp_covers_from: p.coversFrom,
      sbp_covers_until: p.coversUntil,
    })
    .returning('sbp_subscription_payment_id')
    .executeTakeFirstOrThrow();
  return Number(row.sbp_subscription_payment_id);
}

const COLUMNS = [
  'sbp_subscription_payment_id',
  'sbp_odi_order_item_id',
  'sbp_kind',
  'sbp_payment_reference',
  'sbp_invoice_reference',
  'sbp_amount',
  'sbp_currency',
  'sbp_covers_from',
  'sbp_covers_until',
  'sbp_refunded_amount',
] as const;

type Row = { [K in (typeof COLUMNS)[number]]: any };
const toPayment = (r: Row): SubscriptionPayment => ({
  id: Number(r.sbp_subscription_payment_id),
  orderItemId: Number(r.sbp_odi_order_item_id),
  kind: r.sbp_kind,
  paymentReference: r.sbp_payment_reference,
  invoiceReference: r.sbp_invoice_reference,
  amount: Number(r.sbp_amount),
  currency: r.sbp_currency,
  coversFrom: r.sbp_covers_from,
  coversUntil: r.sbp_covers_until,
  refunded: Number(r.sbp_refunded_amount),
});

/** The payments of the period that began at `periodStart` (its own and its upgrades'), oldest first, locked. */
export async function periodPayments(db: Kysely<DB>, orderItemId: number, periodStart: Date): Promise<SubscriptionPayment[]> {
  const rows = await db
    .selectFrom('sbp_subscription_payments')
    .select(COLUMNS)
    .where('sbp_odi_order_item_id', '=', orderItemId)
    .where('sbp_covers_from', '>=', periodStart)
    .orderBy('sbp_covers_from')
    .orderBy('sbp_subscription_payment_id')
    .forUpdate()
    .execute();
  return rows.map((r) => toPayment(r as Row));
}

/** A recorded payment named by the provider's reference (a wallet sale or capture, a card payment intent). */
export async function paymentByReference(db: Kysely<DB>, source: PaymentSource, reference: string): Promise<SubscriptionPayment | undefined> {
  const row = await db
    .selectFrom('sbp_subscription_payments')
    .select(COLUMNS)
    .where('sbp_source', '=', source)
    .where('sbp_payment_reference', '=', reference.slice(0, MAX_REFERENCE))
    .executeTakeFirst();
  return row ? toPayment(row as Row) : undefined;
}

export async function setPaymentReference(db: Kysely<DB>, id: number, reference: string): Promise<void> {
  await db.updateTable('sbp_subscription_payments').set({ sbp_payment_reference: reference.slice(0, MAX_REFERENCE) }).where('sbp_subscription_payment_id', '=', id).execute();
}

export async function addRefunded(db: Kysely<DB>, id: number, amount: number): Promise<void> {
  await db
    .updateTable('sbp_subscription_payments')
    .set((eb) => ({ sbp_refunded_amount: eb('sbp_refunded_amount', '+', amount) }))
    .where('sbp_subscription_payment_id', '=', id)
    .execute();
}
