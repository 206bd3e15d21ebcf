import type { Kysely } from 'kysely';
import type { DB, PaymentSource } from '../../../db/types.js';
import { ORDER_STATUS } from '../../../store/orders.js';

export type OrderStatusKey = keyof typeof ORDER_STATUS;
export const ORDER_STATUS_KEYS = Object.keys(ORDER_STATUS) as OrderStatusKey[];
export const ORDER_STATUS_LABELS: Record<OrderStatusKey, string> = { pending: 'Pending', paid: 'Paid', failed: 'Failed', refunded: 'Refunded' };
const STATUS_BY_CODE = new Map<number, OrderStatusKey>(Object.entries(ORDER_STATUS).map(([k, v]) => [v, k as OrderStatusKey]));

export interface OrderFilter {
  status: OrderStatusKey | null;
  source: PaymentSource | null;
  /** Only this member's orders. */
  userId?: number;
  limit: number;
  offset: number;
}

export interface OrderRow {
  orderId: number;
  time: Date;
  status: OrderStatusKey | null;
  amount: number | null;
  currency: string;
  /** The order's billing source, or (for an order recorded without one) its first item's. */
  source: PaymentSource | null;
  /** The provider's reference for the order, with what kind of reference it is. */
  reference: { kind: string; value: string } | null;
  error: string | null;
  refund: { amount: number | null; time: Date; note: string | null } | null;
  user: { id: number; email: string } | null;
  items: Array<{ itemId: number; product: string; price: number | null; currency: string; subscription: boolean; refundAmount: number | null; refundTime: Date | null; refundNote: string | null }>;
}

function filtered(db: Kysely<DB>, f: OrderFilter) {
  let q = db.selectFrom('ord_orders').where('ord_delete_time', 'is', null);
  if (f.userId !== undefined) q = q.where('ord_usr_user_id', '=', f.userId);
  if (f.status) q = q.where('ord_status', '=', ORDER_STATUS[f.status]);
  const source = f.source;
  if (source) {
    q = q.where((eb) =>
      eb.or([
        eb('ord_payment_source', '=', source),
        eb.and([
          eb('ord_payment_source', 'is', null),
          eb.exists(eb.selectFrom('odi_order_items').select('odi_order_item_id').whereRef('odi_ord_order_id', '=', 'ord_order_id').where('odi_payment_source', '=', source)),
        ]),
      ]),
    );
  }
  return q;
}

/** Orders matching the filter, newest first (then by id, a stable order), with their items and the total. */
export async function listOrders(db: Kysely<DB>, f: OrderFilter): Promise<{ total: number; rows: OrderRow[] }> {
  const counted = await filtered(db, f)
    .select((eb) => eb.fn.countAll<string | number>().as('n'))
    .executeTakeFirstOrThrow();
  const orders = await filtered(db, f)
    .leftJoin('usr_users', 'usr_user_id', 'ord_usr_user_id')
    .select([
      'ord_order_id',
      'ord_timestamp',
      'ord_status',
      'ord_total_cost',
      'ord_currency',
      'ord_payment_source',
      'ord_stripe_payment_intent_id',
      'ord_stripe_session_id',
      'ord_stripe_invoice_id',
      'ord_stripe_charge_id',
      'ord_paypal_order_id',
      'ord_error',
      'ord_refund_amount',
      'ord_refund_time',
      'ord_refund_note',
      'usr_user_id',
      'usr_email',
    ])
    .orderBy('ord_timestamp', 'desc')
    .orderBy('ord_order_id', 'desc')
    .limit(f.limit)
    .offset(f.offset)
    .execute();
  const ids = orders.map((o) => Number(o.ord_order_id));
  const items =
    ids.length === 0
      ? []
      : await db
          .selectFrom('odi_order_items')
          .leftJoin('pro_products', 'pro_product_id', 'odi_pro_product_id')
          .select([
            'odi_order_item_id',
            'odi_ord_order_id',
            'odi_product_info',
            'pro_name',
            'odi_price',
            'odi_currency',
            'odi_is_subscription',
            'odi_payment_source',
            'odi_subscription_reference',
            'odi_refund_amount',
            'odi_refund_time',
            'odi_refund_note',
          ])
          .where('odi_ord_order_id', 'in', ids)
          .where('odi_delete_time', 'is', null)
          .orderBy('odi_order_item_id')
          .execute();
  const num = (v: number | string | null) => (v === null ? null : Number(v));
  const rows = orders.map((o): OrderRow => {
    const own = items.filter((i) => Number(i.odi_ord_order_id) === Number(o.ord_order_id));
    const itemReference = own.find((i) => i.odi_subscription_reference)?.odi_subscription_reference ?? null;
    const candidates: Array<[string, string | null]> = [
      ['payment', o.ord_stripe_payment_intent_id],
      ['charge', o.ord_stripe_charge_id],
      ['invoice', o.ord_stripe_invoice_id],
      ['checkout session', o.ord_stripe_session_id],
      ['wallet order', o.ord_paypal_order_id],
      [own.some((i) => i.odi_is_subscription) ? 'subscription' : 'purchase', itemReference],
    ];
    const found = candidates.find(([, v]) => v);
    return {
      orderId: Number(o.ord_order_id),
      time: o.ord_timestamp,
      status: o.ord_status === null ? null : (STATUS_BY_CODE.get(Number(o.ord_status)) ?? null),
      amount: num(o.ord_total_cost),
      currency: o.ord_currency,
      source: o.ord_payment_source ?? own.find((i) => i.odi_payment_source)?.odi_payment_source ?? null,
      reference: found ? { kind: found[0], value: found[1]! } : null,
      error: o.ord_error,
      refund: o.ord_refund_time ? { amount: num(o.ord_refund_amount), time: o.ord_refund_time, note: o.ord_refund_note } : null,
      user: o.usr_user_id === null ? null : { id: Number(o.usr_user_id), email: o.usr_email! },
      items: own.map((i) => ({
        itemId: Number(i.odi_order_item_id),
        product: i.pro_name ?? i.odi_product_info ?? `Product`,
        price: num(i.odi_price),
        currency: i.odi_currency,
        subscription: Boolean(i.odi_is_subscription),
        refundAmount: num(i.odi_refund_amount),
        refundTime: i.odi_refund_time,
        refundNote: i.odi_refund_note,
      })),
    };
  });
  return { total: Number(counted.n), rows };
}
