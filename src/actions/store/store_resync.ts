import { mayActOn } from '../../accounts/authority.js';
import { businessError, validationError } from '../../http/errors.js';
import { reconcileSubscriptions } from '../../store/reconcile/reconcile.js';
import { storeActive } from '../../settings/store-active.js';
import { TierMembershipService } from '../../tiers/membership.js';
import { defineAction } from '../define.js';

/**
 * Staff, from the admin member page: read one member's subscriptions from their providers now and
 * repair what differs (DESIGN 14's reconciliation, for one member), in the action's transaction.
 */
export default defineAction({
  name: 'store_resync',
  description: "Resync a member's billing: read their subscriptions from the providers and repair what differs (staff, website session)",
  mutates: true,
  auth: { requires_browser_session: true, min_user_permission: 5 },
  input: {
    user_id: { type: 'int', required: true, min: 1 },
  },
  async run({ input, user: me, db, settings, clock, storeDeps }) {
    if (!storeActive(settings)) throw businessError('The store is inactive: billing cannot be resynced');
    const target = await db.selectFrom('usr_users').select(['usr_user_id', 'usr_permission']).where('usr_user_id', '=', input.user_id).executeTakeFirst();
    if (!target) throw validationError({ user_id: 'no such user' });
    if (!mayActOn(me, { usr_user_id: Number(target.usr_user_id), usr_permission: Number(target.usr_permission) })) {
      throw businessError('You cannot resync the billing of a user with more permission than yours');
    }
    const report = await reconcileSubscriptions({ db, settings, clock, deps: storeDeps }, new TierMembershipService(db, clock), { userId: input.user_id });
    const message =
      report.unreachable.length > 0
        ? `Checked ${report.checked}; ${report.applied} repaired; ${report.unreachable.length} could not be read from the provider (nothing about them changed).`
        : report.drift.length === 0
          ? `Checked ${report.checked}: billing agrees with the providers.`
          : `Checked ${report.checked}; ${report.applied} repaired.`;
    return { data: { user_id: input.user_id, ...report }, message, redirect: `/admin/members/${input.user_id}` };
  },
});
