import type { SubscriptionStatus } from '../../db/types.js';
import type { StoreEventKind } from '../events.js';
import type { ProviderReading, ProviderStatus } from './providers.js';

/** What reconciling one subscription does; 'none' when ours already agrees with the provider. */
export type DriftAction = 'none' | 'renewed' | 'reactivated' | 'cancelled' | 'expired' | 'refunded' | 'in_grace' | 'on_hold' | 'paused' | 'recovered';

type PlannedKind = Extract<StoreEventKind, 'renewal' | 'cancellation_undone' | 'cancellation_scheduled' | 'expiry' | 'refund' | 'in_grace' | 'on_hold' | 'paused' | 'recovery'>;

export interface Plan {
  action: DriftAction;
  /** The events that bring ours to the provider's state, applied in order through the store's processor. */
  events: PlannedKind[];
}

const NONE: Plan = { action: 'none', events: [] };

/** A period end later than ours by at least a second: a renewal we did not hear of. */
function extended(ours: Date | null, provider: Date | null): boolean {
  return ours !== null && provider !== null && provider.getTime() - ours.getTime() >= 1000;
}

/** Our billing-issue statuses (DESIGN 14): the provider is retrying, holding or pausing the subscription. */
const BILLING_ISSUE: readonly SubscriptionStatus[] = ['in_grace', 'on_hold', 'paused'];
const issue = (s: SubscriptionStatus | null) => s !== null && BILLING_ISSUE.includes(s);
const live = (s: SubscriptionStatus | null) => s === 'active' || s === 'cancelled' || issue(s);

/**
 * The provider's state wins. Per provider status, from ours (active, cancelled, in a billing issue, or
 * recently expired):
 *
 * | provider  | ours active                  | ours cancelled                 | ours in_grace/on_hold/paused  | ours expired                  |
 * |-----------|------------------------------|--------------------------------|-------------------------------|-------------------------------|
 * | active    | renewal if the period grew   | (renewal) + cancellation undone | recovery                     | renewal + cancellation undone, while paid |
 * | cancelled | (renewal) + cancellation     | renewal if the period grew     | recovery + cancellation       | renewal + cancellation, while paid |
 * | in_grace  | in_grace                     | cancellation undone + in_grace | (recovery +) in_grace         | —                             |
 * | on_hold   | on_hold                      | cancellation undone + on_hold  | on_hold                       | —                             |
 * | paused    | paused                       | cancellation undone + paused   | paused                        | —                             |
 * | expired   | expiry                       | expiry                         | expiry                        | —                             |
 * | refunded  | refund                       | refund                         | refund                        | refund (status only)          |
 *
 * A renewal and a recovery go through the one grant path (a recovery extends the period to the
 * provider's and gives the tier back); in_grace keeps the tier; on_hold, paused, expiry and refund go
 * through the one removal path. A billing issue at the provider means the subscription renews, so a
 * cancellation we hold is undone first; on hold or paused, a grace period follows a recovery (the grant
 * path) so that access is kept while the provider retries. An ended subscription is not revived into a
 * billing issue.
 */
export function planReconcile(ours: { status: SubscriptionStatus | null; periodEnd: Date | null }, provider: ProviderReading, now: Date): Plan {
  const p: ProviderStatus | null = provider.status;
  if (p === null) return NONE;
  const grew = extended(ours.periodEnd, provider.periodEnd);
  const stillPaid = provider.periodEnd !== null && provider.periodEnd.getTime() > now.getTime();
  switch (p) {
    case 'active':
      if (ours.status === 'active') return grew ? { action: 'renewed', events: ['renewal'] } : NONE;
      if (ours.status === 'cancelled') return grew ? { action: 'renewed', events: ['renewal', 'cancellation_undone'] } : { action: 'reactivated', events: ['cancellation_undone'] };
      if (issue(ours.status)) return { action: 'recovered', events: ['recovery'] };
      return stillPaid ? { action: 'renewed', events: ['renewal', 'cancellation_undone'] } : NONE;
    case 'cancelled':
      if (ours.status === 'active') return grew ? { action: 'renewed', events: ['renewal', 'cancellation_scheduled'] } : { action: 'cancelled', events: ['cancellation_scheduled'] };
      if (ours.status === 'cancelled') return grew ? { action: 'renewed', events: ['renewal', 'cancellation_scheduled'] } : NONE;
      if (issue(ours.status)) return { action: 'recovered', events: ['recovery', 'cancellation_scheduled'] };
      return stillPaid ? { action: 'renewed', events: ['renewal', 'cancellation_scheduled'] } : NONE;
    case 'expired':
      return live(ours.status) ? { action: 'expired', events: ['expiry'] } : NONE;
    case 'refunded':
      return ours.status === 'refunded' ? NONE : { action: 'refunded', events: ['refund'] };
    case 'in_grace':
    case 'on_hold':
    case 'paused':
      if (ours.status === p || !live(ours.status)) return NONE;
      if (ours.status === 'cancelled') return { action: p, events: ['cancellation_undone', p] };
      // The processor enters grace only from active: a held or paused subscription recovers first.
      if (p === 'in_grace' && issue(ours.status)) return { action: p, events: ['recovery', p] };
      return { action: p, events: [p] };
  }
}
