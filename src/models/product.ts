import { standardTimes, maxVisibleTierLevel } from './common.js';
import { col, defineModel } from './define.js';

// Stripe product ids are kept for compatibility with the platform's clients; no integration uses them.
// pro_sbt_subscription_tier_id gets its foreign key from the tier migration.
export const Product = defineModel({
  className: 'Product',
  table: 'pro_products',
  prefix: 'pro',
  primaryKey: 'pro_product_id',
  owner: null,
  columns: {
    pro_product_id: col.serial(),
    pro_name: col.varchar(255, { required: true }),
    pro_short_description: col.text(),
    pro_description: col.text(),
    pro_max_cart_count: col.int({ min: 0 }),
    pro_max_purchase_count: col.int({ min: 0 }),
    pro_prg_product_group_id: col.int(),
    pro_after_purchase_message: col.text(),
    pro_evt_event_id: col.bigint(),
    pro_expires: col.int(),
    pro_is_active: col.bool(),
    pro_grp_group_id: col.int(),
    pro_type: col.int(),
    pro_digital_link: col.varchar(255),
    pro_num_remaining_calc: col.int(),
    pro_link: col.varchar(255, { required: true }),
    pro_product_scripts: col.text(),
    pro_stripe_product_id: col.varchar(64),
    pro_stripe_product_id_test: col.varchar(64),
    pro_sbt_subscription_tier_id: col.int(),
    pro_tier_min_level: col.int(),
    // Each billing source's reference for this product (store, migration 0008); price in minor units.
    pro_card_price_id: col.varchar(255),
    pro_wallet_plan_id: col.varchar(255),
    pro_ios_product_id: col.varchar(255),
    pro_android_product_id: col.varchar(255),
    pro_price: col.bigint({ min: 0 }),
    pro_currency: col.varchar(3),
    pro_fil_file_id: col.bigint(),
    // Billing period of a subscription product, the summary's "period" (migration 0010).
    pro_subscription_period: col.varchar(8, { options: ['day', 'week', 'month', 'year'] }),
    ...standardTimes('pro'),
  },
  exposure: { readable: true, writable: true, publicRead: true },
  gate: { minLevel: 'pro_tier_min_level', body: ['pro_description', 'pro_digital_link', 'pro_after_purchase_message'] },
  filters: { max_visible_tier_level: maxVisibleTierLevel('pro_tier_min_level') },
});
