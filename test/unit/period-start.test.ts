import { describe, expect, it } from 'vitest';
import { currentPeriodStart, periodBefore } from '../../src/store/lifecycle/cancel.js';

const d = (s: string) => new Date(s);

describe('the start of the current paid period', () => {
  it('is one billing period before the end', () => {
    expect(periodBefore(d('2026-04-01T10:00:00Z'), 'month').toISOString()).toBe('2026-03-01T10:00:00.000Z');
    expect(periodBefore(d('2027-03-01T00:00:00Z'), 'year').toISOString()).toBe('2026-03-01T00:00:00.000Z');
    expect(periodBefore(d('2026-03-08T00:00:00Z'), 'week').toISOString()).toBe('2026-03-01T00:00:00.000Z');
    expect(periodBefore(d('2026-03-02T00:00:00Z'), 'day').toISOString()).toBe('2026-03-01T00:00:00.000Z');
  });

  it('lands on the last day of a shorter month', () => {
    expect(periodBefore(d('2026-03-31T00:00:00Z'), 'month').toISOString()).toBe('2026-02-28T00:00:00.000Z');
    expect(periodBefore(d('2028-03-31T00:00:00Z'), 'month').toISOString()).toBe('2028-02-29T00:00:00.000Z');
    expect(periodBefore(d('2026-01-15T00:00:00Z'), 'month').toISOString()).toBe('2025-12-15T00:00:00.000Z');
    expect(periodBefore(d('2029-02-28T00:00:00Z'), 'year').toISOString()).toBe('2028-02-28T00:00:00.000Z');
  });

  it('follows renewals: a recorded start older than one period is replaced by the current period’s start', () => {
    const sub = { period: 'month' as const, periodStart: d('2026-01-01T00:00:00Z'), createTime: d('2026-01-01T00:00:00Z') };
    expect(currentPeriodStart(sub, d('2026-04-01T00:00:00Z')).toISOString()).toBe('2026-03-01T00:00:00.000Z');
  });

  it('never starts before the recorded start (a first, shorter period)', () => {
    const sub = { period: 'month' as const, periodStart: d('2026-03-10T00:00:00Z'), createTime: d('2026-03-01T00:00:00Z') };
    expect(currentPeriodStart(sub, d('2026-04-01T00:00:00Z')).toISOString()).toBe('2026-03-10T00:00:00.000Z');
  });

  it('without a billing period uses the recorded start, else the purchase time', () => {
    expect(currentPeriodStart({ period: null, periodStart: d('2026-02-01T00:00:00Z'), createTime: d('2026-01-01T00:00:00Z') }, d('2026-04-01T00:00:00Z')).toISOString()).toBe('2026-02-01T00:00:00.000Z');
    expect(currentPeriodStart({ period: null, periodStart: null, createTime: d('2026-01-01T00:00:00Z') }, d('2026-04-01T00:00:00Z')).toISOString()).toBe('2026-01-01T00:00:00.000Z');
  });
});
