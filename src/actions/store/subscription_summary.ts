import { subscriptionSummary } from '../../store/lifecycle/summary.js';
import { defineAction } from '../define.js';

/** Read-only subscription summary (native apps; the member web view reads it too). */
export default defineAction({
  name: 'subscription_summary',
  description: 'Read-only summary of your subscriptions, current tier and payment source',
  mutates: false,
  async run({ user: me, db, settings, featureRegistry, caches }) {
    return { data: { ...(await subscriptionSummary(db, settings, featureRegistry, me.usr_user_id, caches.userTiers)) } };
  },
});
