import { standardTimes } from './common.js';
import { col, defineModel } from './define.js';

// Staff-only. ccd_amount_discount holds cents (int8), DESIGN 6.
export const CouponCode = defineModel({
  className: 'CouponCode',
  table: 'ccd_coupon_codes',
  prefix: 'ccd',
  primaryKey: 'ccd_coupon_code_id',
  owner: null,
  columns: {
    ccd_coupon_code_id: col.serial(),
    ccd_code: col.varchar(64, { required: true }),
    ccd_amount_discount: col.bigint({ min: 0 }),
    ccd_percent_discount: col.int({ min: 0, maxValue: 100 }),
    ccd_start_time: col.timestamp(),
    ccd_end_time: col.timestamp(),
    ccd_is_active: col.bool(),
    ccd_max_num_uses: col.int({ min: 0 }),
    ccd_is_stackable: col.bool(),
    ccd_usr_user_id_affiliate: col.bigint(),
    ccd_applies_to: col.int(),
    ...standardTimes('ccd'),
  },
  exposure: { readable: true, writable: true },
});
