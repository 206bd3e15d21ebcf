import { describe, expect, it } from 'vitest';
import { planReconcile } from '../../src/store/reconcile/plan.js';
import { appStoreStatus, cardStatus, playStatus, walletStatus, type ProviderStatus } from '../../src/store/reconcile/providers.js';

const D = (day: number) => new Date(Date.UTC(2026, 2, 1 + day));
const NOW = D(31);
const reading = (status: ProviderStatus | null, periodEnd: Date | null) => ({ status, periodEnd, state: 'x' });

describe('provider states in our words', () => {
  it('card processor (Stripe subscription statuses)', () => {
    expect(cardStatus('active', false)).toBe('active');
    expect(cardStatus('trialing', false)).toBe('active');
    expect(cardStatus('active', true)).toBe('cancelled');
    expect(cardStatus('past_due', false)).toBe('in_grace');
    expect(cardStatus('unpaid', false)).toBe('on_hold');
    expect(cardStatus('paused', false)).toBe('paused');
    expect(cardStatus('canceled', false)).toBe('expired');
    expect(cardStatus('incomplete_expired', false)).toBe('expired');
    expect(cardStatus('incomplete', false)).toBeNull();
  });

  it('wallet provider: SUSPENDED is our own end-of-period cancel when we hold it cancelled; a cancellation at the provider ends at the paid period end', () => {
    const ours = (status: 'active' | 'cancelled', periodEnd: Date) => ({ reference: 'I-1', status, periodEnd });
    expect(walletStatus('ACTIVE', ours('active', D(30)), NOW)).toBe('active');
    expect(walletStatus('SUSPENDED', ours('cancelled', D(40)), NOW)).toBe('cancelled');
    expect(walletStatus('SUSPENDED', ours('active', D(40)), NOW)).toBe('on_hold');
    expect(walletStatus('CANCELLED', ours('active', D(40)), NOW)).toBe('cancelled');
    expect(walletStatus('CANCELLED', ours('active', D(30)), NOW)).toBe('expired');
    expect(walletStatus('EXPIRED', ours('active', D(40)), NOW)).toBe('expired');
    expect(walletStatus('APPROVAL_PENDING', ours('active', D(40)), NOW)).toBeNull();
  });

  it('App Store (status 1-5 with the renewal info and a revocation)', () => {
    expect(appStoreStatus(1, 1, false)).toBe('active');
    expect(appStoreStatus(1, 0, false)).toBe('cancelled');
    expect(appStoreStatus(2, 0, false)).toBe('expired');
    expect(appStoreStatus(3, 1, false)).toBe('on_hold');
    expect(appStoreStatus(4, 1, false)).toBe('in_grace');
    expect(appStoreStatus(5, 1, false)).toBe('refunded');
    expect(appStoreStatus(1, 1, true)).toBe('refunded');
  });

  it('Google Play (subscriptionState)', () => {
    expect(playStatus('SUBSCRIPTION_STATE_ACTIVE')).toBe('active');
    expect(playStatus('SUBSCRIPTION_STATE_CANCELED')).toBe('cancelled');
    expect(playStatus('SUBSCRIPTION_STATE_IN_GRACE_PERIOD')).toBe('in_grace');
    expect(playStatus('SUBSCRIPTION_STATE_ON_HOLD')).toBe('on_hold');
    expect(playStatus('SUBSCRIPTION_STATE_PAUSED')).toBe('paused');
    expect(playStatus('SUBSCRIPTION_STATE_EXPIRED')).toBe('expired');
    expect(playStatus('SUBSCRIPTION_STATE_PENDING')).toBeNull();
  });
});

describe('planReconcile: the provider state wins', () => {
  const plan = (status: 'active' | 'cancelled' | 'expired' | 'refunded' | 'in_grace' | 'on_hold' | 'paused', periodEnd: Date | null, p: ProviderStatus | null, pEnd: Date | null) =>
    planReconcile({ status, periodEnd }, reading(p, pEnd), NOW);

  it('agreeing states plan nothing', () => {
    expect(plan('active', D(30), 'active', D(30))).toEqual({ action: 'none', events: [] });
    expect(plan('cancelled', D(40), 'cancelled', D(40))).toEqual({ action: 'none', events: [] });
    expect(plan('expired', D(30), 'expired', D(30))).toEqual({ action: 'none', events: [] });
    expect(plan('active', D(30), null, null)).toEqual({ action: 'none', events: [] });
    // Less than a second apart (providers state whole seconds).
    expect(plan('active', D(30), 'active', new Date(D(30).getTime() + 999))).toEqual({ action: 'none', events: [] });
  });

  it('a lost renewal, cancellation, reactivation, expiry or refund', () => {
    expect(plan('active', D(30), 'active', D(60))).toEqual({ action: 'renewed', events: ['renewal'] });
    expect(plan('cancelled', D(30), 'active', D(60))).toEqual({ action: 'renewed', events: ['renewal', 'cancellation_undone'] });
    expect(plan('cancelled', D(40), 'active', D(40))).toEqual({ action: 'reactivated', events: ['cancellation_undone'] });
    expect(plan('expired', D(30), 'active', D(60))).toEqual({ action: 'renewed', events: ['renewal', 'cancellation_undone'] });
    expect(plan('active', D(40), 'cancelled', D(40))).toEqual({ action: 'cancelled', events: ['cancellation_scheduled'] });
    expect(plan('active', D(30), 'cancelled', D(60))).toEqual({ action: 'renewed', events: ['renewal', 'cancellation_scheduled'] });
    expect(plan('expired', D(30), 'cancelled', D(60))).toEqual({ action: 'renewed', events: ['renewal', 'cancellation_scheduled'] });
    expect(plan('active', D(30), 'expired', D(30))).toEqual({ action: 'expired', events: ['expiry'] });
    expect(plan('cancelled', D(30), 'expired', null)).toEqual({ action: 'expired', events: ['expiry'] });
    expect(plan('active', D(30), 'refunded', D(30))).toEqual({ action: 'refunded', events: ['refund'] });
    expect(plan('expired', D(30), 'refunded', D(30))).toEqual({ action: 'refunded', events: ['refund'] });
  });

  it('an ended subscription the provider reports active but no longer paid is not revived', () => {
    expect(plan('expired', D(30), 'active', D(30))).toEqual({ action: 'none', events: [] });
    expect(plan('expired', D(20), 'cancelled', D(30))).toEqual({ action: 'none', events: [] });
  });

  it('a lost billing issue is applied as its event: grace, hold or pause from active; a cancellation we hold is undone first', () => {
    for (const p of ['in_grace', 'on_hold', 'paused'] as const) {
      expect(plan('active', D(30), p, D(60))).toEqual({ action: p, events: [p] });
      expect(plan('cancelled', D(30), p, D(60))).toEqual({ action: p, events: ['cancellation_undone', p] });
      // An ended subscription is not revived into a billing issue.
      expect(plan('expired', D(30), p, D(30))).toEqual({ action: 'none', events: [] });
    }
    expect(plan('in_grace', D(30), 'on_hold', D(30))).toEqual({ action: 'on_hold', events: ['on_hold'] });
    expect(plan('in_grace', D(30), 'paused', D(30))).toEqual({ action: 'paused', events: ['paused'] });
    expect(plan('paused', D(30), 'on_hold', D(30))).toEqual({ action: 'on_hold', events: ['on_hold'] });
    // Grace follows a hold or pause only through a recovery (access kept while the provider retries).
    expect(plan('on_hold', D(30), 'in_grace', D(37))).toEqual({ action: 'in_grace', events: ['recovery', 'in_grace'] });
    expect(plan('paused', D(30), 'in_grace', D(37))).toEqual({ action: 'in_grace', events: ['recovery', 'in_grace'] });
  });

  it('the same billing issue as ours plans nothing', () => {
    for (const p of ['in_grace', 'on_hold', 'paused'] as const) expect(plan(p, D(30), p, D(60))).toEqual({ action: 'none', events: [] });
  });

  it('a lost recovery: the provider active (or cancelled at period end) again while ours has a billing issue', () => {
    for (const ours of ['in_grace', 'on_hold', 'paused'] as const) {
      expect(plan(ours, D(30), 'active', D(60))).toEqual({ action: 'recovered', events: ['recovery'] });
      expect(plan(ours, D(30), 'active', D(30))).toEqual({ action: 'recovered', events: ['recovery'] });
      expect(plan(ours, D(30), 'cancelled', D(60))).toEqual({ action: 'recovered', events: ['recovery', 'cancellation_scheduled'] });
      expect(plan(ours, D(30), 'expired', D(30))).toEqual({ action: 'expired', events: ['expiry'] });
      expect(plan(ours, D(30), 'refunded', D(30))).toEqual({ action: 'refunded', events: ['refund'] });
    }
  });
});
