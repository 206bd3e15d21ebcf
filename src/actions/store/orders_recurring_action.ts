import { cancelSubscription, reactivateSubscription } from '../../store/lifecycle/cancel.js';
import { defineAction } from '../define.js';

/** An amount in minor units as the member reads it: 12.34 USD. */
const formatMinor = (minor: number, currency: string) => `${(minor / 100).toFixed(2)} ${currency.toUpperCase()}`;

/**
 * A member's action on one of their recurring orders (subscription order items): cancel, as native apps
 * and the web cancel control send it, or reactivate a cancelled one before it ends.
 */
export default defineAction({
  name: 'orders_recurring_action',
  description: 'Cancel or reactivate one of your subscriptions',
  mutates: true,
  input: {
    order_item_id: { type: 'int', required: true, min: 1 },
    recurring_action: { type: 'string', required: true, options: ['cancel', 'reactivate'] },
  },
  async run({ input, user, db, settings, clock }) {
    const ctx = { db, settings, clock, userId: user.usr_user_id };
    if (input.recurring_action === 'reactivate') {
      const done = await reactivateSubscription(ctx, input.order_item_id);
      return { data: { ...done }, message: 'Your subscription has been reactivated.', redirect: '/profile/subscription' };
    }
    const done = await cancelSubscription(ctx, input.order_item_id);
    if (!done.cancelled) {
      // The refund was made and is recorded; the provider then would not cancel: say exactly that.
      const message = `We refunded ${formatMinor(done.refund_amount ?? 0, done.currency)} of the unused period, but your subscription could not be cancelled at the payment provider: it is still active and will renew. Please try cancelling again later.`;
      return { data: { ...done }, message, redirect: '/profile/subscription' };
    }
    const message =
      done.timing === 'end_of_period'
        ? `Your subscription has been cancelled; you keep access until ${done.end_date ?? 'the end of the paid period'}.`
        : done.refund_amount
          ? 'Your subscription has been cancelled and the unused part of the period refunded.'
          : 'Your subscription has been cancelled.';
    return { data: { ...done }, message, redirect: '/profile/subscription' };
  },
});
