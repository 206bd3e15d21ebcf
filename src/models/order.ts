import { standardTimes } from './common.js';
import { col, defineModel } from './define.js';

// Money is integer minor units (DESIGN 6): ord_total_cost and ord_refund_amount keep SCHEMA's names but
// hold cents (int8), in ord_currency. Orders are written by checkout and webhooks, never over CRUD.
export const Order = defineModel({
  className: 'Order',
  table: 'ord_orders',
  prefix: 'ord',
  primaryKey: 'ord_order_id',
  owner: 'ord_usr_user_id',
  columns: {
    ord_order_id: col.serial(),
    ord_usr_user_id: col.bigint(),
    ord_timestamp: col.timestamp(),
    ord_total_cost: col.bigint(),
    ord_currency: col.varchar(3),
    ord_billing_address_id: col.bigint(),
    ord_stripe_session_id: col.varchar(70),
    ord_stripe_payment_intent_id: col.varchar(32),
    ord_raw_response: col.text(),
    ord_raw_cart: col.text(),
    ord_serialized_cart: col.text(),
    ord_status: col.int(),
    ord_error: col.varchar(255),
    ord_refund_amount: col.bigint(),
    ord_refund_time: col.timestamp(),
    ord_refund_note: col.varchar(255),
    ord_stripe_charge_id: col.varchar(64),
    ord_stripe_invoice_id: col.varchar(64),
    ord_test_mode: col.bool(),
    ord_stripe_subscription_id_temp: col.varchar(255),
    ord_paypal_order_id: col.varchar(64),
    ord_payment_method: col.varchar(32),
    ord_payment_source: col.varchar(20, { options: ['card_processor', 'wallet_provider', 'ios_store', 'android_store'] }),
    ...standardTimes('ord'),
  },
  // Provider payloads stay server-side.
  exposure: { readable: true, writable: false, unreadable: ['ord_raw_response', 'ord_raw_cart', 'ord_serialized_cart'] },
});
