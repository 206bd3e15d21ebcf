import { validationError } from '../../http/errors.js';
import { changeTier } from '../../store/lifecycle/change-tier.js';
import { defineAction } from '../define.js';

const MESSAGES = {
  upgrade: (tier: string) => `Your subscription has been upgraded to ${tier}.`,
  downgrade: (tier: string) => `Your subscription has been moved to ${tier}.`,
  downgrade_scheduled: (tier: string, at: string) => `Your subscription will move to ${tier} at the end of the paid period (${at}).`,
  scheduled_downgrade_cancelled: (tier: string) => `Your scheduled change is cancelled; you stay on ${tier}.`,
};

/** Change the tier of the member's web-billed subscription: upgrade, downgrade, or undo a scheduled downgrade. */
export default defineAction({
  name: 'change_tier',
  description: 'Change your subscription tier (upgrade or downgrade); give product_id or tier_id',
  mutates: true,
  input: {
    product_id: { type: 'int', min: 1 },
    tier_id: { type: 'int', min: 1 },
  },
  async run({ input, user: me, db, settings, clock }) {
    const productId = input.product_id ?? null;
    const tierId = input.tier_id ?? null;
    if ((productId === null) === (tierId === null)) {
      throw validationError({ product_id: 'give either product_id or tier_id', tier_id: 'give either product_id or tier_id' });
    }
    const target = productId !== null ? { productId } : { tierId: tierId! };
    const done = await changeTier({ db, settings, clock, userId: me.usr_user_id }, target);
    const approve = done.approval_url ? ' Approve the new plan with your wallet provider to complete the change.' : '';
    const message = MESSAGES[done.change](done.tier.display_name, done.effective_date) + approve;
    // redirect is a path (the contract); a wallet approval link travels in data.approval_url.
    return { data: { ...done }, message, redirect: '/profile/subscription' };
  },
});
