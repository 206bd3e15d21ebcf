import type { SubscriptionStatus } from '../../db/types.js';
import type { StoreEventKind } from '../events.js';
import type { ProviderReading, ProviderStatus } from './providers.js';

/** What reconciling one subscription does; 'none' when ours already agrees with the provider. */
export type DriftAction = 'none' | 'renewed' | 'reactivated' | 'cancelled' | 'expired' | 'refunded' | 'not_applied';

export interface Plan {
  action: DriftAction;
  /** The events that bring ours to the provider's state, applied in order through the store's processor. */
  events: Array<Extract<StoreEventKind, 'renewal' | 'cancellation_undone' | 'cancellation_scheduled' | 'expiry' | 'refund'>>;
}

const NONE: Plan = { action: 'none', events: [] };

/** A period end later than ours by at least a second: a renewal we did not hear of. */
function extended(ours: Date | null, provider: Date | null): boolean {
  return ours !== null && provider !== null && provider.getTime() - ours.getTime() >= 1000;
}

const live = (s: SubscriptionStatus | null) => s === 'active' || s === 'cancelled';

/**
 * The provider's state wins. Per provider status, from ours (active, cancelled, or recently expired):
 *
 * | provider  | ours active                  | ours cancelled                       | ours expired               |
 * |-----------|------------------------------|--------------------------------------|----------------------------|
 * | active    | renewal if the period grew   | (renewal) + cancellation undone      | renewal + cancellation undone |
 * | cancelled | (renewal) + cancellation     | renewal if the period grew           | renewal + cancellation, while paid |
 * | expired   | expiry                       | expiry                               | —                          |
 * | refunded  | refund                       | refund                               | refund (status only)       |
 *
 * A renewal goes through the one grant path (it extends the period and keeps or gives back the tier);
 * expiry and refund through the one removal path.
 *
 * The billing-issue statuses (in_grace, on_hold, paused; DESIGN 14) are read from every provider but not
 * applied here yet: they are reported as drift with action 'not_applied' whenever ours is live (the
 * provider has a billing problem we do not show). Once the store has those statuses, this is the one
 * place to add them: in_grace keeps the tier, on_hold and paused remove it, and a provider back to active
 * from one of them is a recovery (the grant path), each as the event kind the processor gives them.
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
      return stillPaid ? { action: 'renewed', events: ['renewal', 'cancellation_undone'] } : NONE;
    case 'cancelled':
      if (ours.status === 'active') return grew ? { action: 'renewed', events: ['renewal', 'cancellation_scheduled'] } : { action: 'cancelled', events: ['cancellation_scheduled'] };
      if (ours.status === 'cancelled') return grew ? { action: 'renewed', events: ['renewal', 'cancellation_scheduled'] } : NONE;
      return stillPaid ? { action: 'renewed', events: ['renewal', 'cancellation_scheduled'] } : NONE;
    case 'expired':
      return live(ours.status) ? { action: 'expired', events: ['expiry'] } : NONE;
    case 'refunded':
      return ours.status === 'refunded' ? NONE : { action: 'refunded', events: ['refund'] };
    case 'in_grace':
    case 'on_hold':
    case 'paused':
      return live(ours.status) ? { action: 'not_applied', events: [] } : NONE;
  }
}
