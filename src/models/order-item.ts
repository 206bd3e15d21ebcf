import { standardTimes } from './common.js';
import { col, defineModel } from './define.js';

// odi_price and odi_refund_amount hold cents (int8) in odi_currency (DESIGN 6). odi_payment_source is
// added: which provider took the payment. Written by checkout and webhooks, never over CRUD.
export const OrderItem = defineModel({
  className: 'OrderItem',
  table: 'odi_order_items',
  prefix: 'odi',
  primaryKey: 'odi_order_item_id',
  owner: 'odi_usr_user_id',
  columns: {
    odi_order_item_id: col.serial(),
    odi_ord_order_id: col.bigint({ required: true }),
    odi_pro_product_id: col.bigint({ required: true }),
    odi_prv_product_version_id: col.int(),
    odi_product_info: col.text(),
    odi_price: col.bigint(),
    odi_currency: col.varchar(3),
    odi_status: col.smallint(),
    odi_status_change_time: col.timestamp(),
    odi_usr_user_id: col.bigint(),
    odi_evr_event_registrant_id: col.bigint(),
    odi_comment: col.varchar(255),
    odi_stripe_subscription_id: col.varchar(255),
    odi_is_subscription: col.bool(),
    odi_subscription_cancelled_time: col.timestamp(),
    odi_refund_amount: col.bigint(),
    odi_refund_note: col.varchar(255),
    odi_refund_time: col.timestamp(),
    odi_stripe_foreign_invoice_id: col.varchar(64),
    odi_subscription_status: col.varchar(64),
    odi_subscription_period_end: col.timestamp(),
    odi_subscription_cancel_at_period_end: col.bool(),
    odi_paypal_subscription_id: col.varchar(64),
    odi_payment_source: col.varchar(20, { options: ['card_processor', 'wallet_provider', 'ios_store', 'android_store'] }),
    odi_subscription_reference: col.varchar(255),
    odi_last_event_time: col.timestamp(),
    odi_source_conflict_time: col.timestamp(),
    // Subscription lifecycle (migration 0010): start of the paid period (base of a prorated refund) and
    // the lower-tier product of a downgrade scheduled for the period end, and when it applies.
    odi_subscription_period_start: col.timestamp(),
    odi_scheduled_pro_product_id: col.bigint(),
    odi_scheduled_change_time: col.timestamp(),
    // Billing-issue states (migration 0035, DESIGN 14): in_grace keeps access until the grace end; a
    // paused subscription's stated resume time.
    odi_subscription_grace_until: col.timestamp(),
    odi_subscription_resume_time: col.timestamp(),
    ...standardTimes('odi'),
  },
  exposure: { readable: true, writable: false },
});
