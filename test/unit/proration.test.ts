import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { ProrationError, cancellationRefund, unusedAmount, refundsAcross } from '../../src/store/lifecycle/proration.js';

const start = new Date('2026-03-01T00:00:00Z');
const end = new Date('2026-03-31T00:00:00Z'); // 30 days
const period = { priceMinor: 3000, periodStart: start, periodEnd: end };
const at = (iso: string) => new Date(iso);

describe('proration of a paid period in exact minor units', () => {
  it('the unused share is price × unused time / period length', () => {
    expect(unusedAmount(period, at('2026-03-16T00:00:00Z'))).toBe(1500); // half the period left
    expect(unusedAmount(period, at('2026-03-21T00:00:00Z'))).toBe(1000); // 10 of 30 days left
    expect(unusedAmount(period, at('2026-03-30T00:00:00Z'))).toBe(100); // 1 of 30 days left
  });

  it('rounds down so a refund never exceeds the unused amount', () => {
    // 999 cents over 3 equal parts, 2 left: exactly 666; one second later: 665.99... → 665
    const p = { priceMinor: 999, periodStart: start, periodEnd: new Date(start.getTime() + 3_000) };
    expect(unusedAmount(p, new Date(start.getTime() + 1_000))).toBe(666);
    expect(unusedAmount(p, new Date(start.getTime() + 1_001))).toBe(665);
  });

  it('is the whole price before the period starts and nothing at or after its end', () => {
    expect(unusedAmount(period, at('2026-02-01T00:00:00Z'))).toBe(3000);
    expect(unusedAmount(period, start)).toBe(3000);
    expect(unusedAmount(period, end)).toBe(0);
    expect(unusedAmount(period, at('2026-05-01T00:00:00Z'))).toBe(0);
  });

  it('stays exact for prices far beyond what floating point multiplies safely', () => {
    const big = { priceMinor: Number.MAX_SAFE_INTEGER, periodStart: start, periodEnd: end };
    // a third of the period left: floor(MAX_SAFE_INTEGER / 3) exactly
    const third = new Date(end.getTime() - (end.getTime() - start.getTime()) / 3);
    expect(unusedAmount(big, third)).toBe(Number(BigInt(Number.MAX_SAFE_INTEGER) / 3n));
  });

  it('a cancellation refund is the unused amount with proration on and 0 with it off', () => {
    const mid = at('2026-03-11T00:00:00Z'); // 20 of 30 days left
    expect(cancellationRefund(period, mid, true)).toBe(2000);
    expect(cancellationRefund(period, mid, false)).toBe(0);
  });

  it('refuses a negative or fractional price and an empty or inverted period', () => {
    expect(() => unusedAmount({ ...period, priceMinor: -1 }, start)).toThrow(ProrationError);
    expect(() => unusedAmount({ ...period, priceMinor: 9.5 }, start)).toThrow(ProrationError);
    expect(() => unusedAmount({ ...period, periodEnd: start }, start)).toThrow(ProrationError);
    expect(() => unusedAmount({ ...period, periodEnd: at('2026-01-01T00:00:00Z') }, start)).toThrow(ProrationError);
    expect(() => unusedAmount({ ...period, periodStart: new Date(Number.NaN) }, start)).toThrow(ProrationError);
  });

  it('is always between 0 and the price and never grows as time passes', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 0, max: 10_000_000_00 }),
        fc.integer({ min: 1, max: 400 * 86_400_000 }),
        fc.integer({ min: -86_400_000, max: 401 * 86_400_000 }),
        fc.integer({ min: 0, max: 86_400_000 }),
        (price, length, offset, step) => {
          const p = { priceMinor: price, periodStart: start, periodEnd: new Date(start.getTime() + length) };
          const a = unusedAmount(p, new Date(start.getTime() + offset));
          const b = unusedAmount(p, new Date(start.getTime() + offset + step));
          expect(Number.isInteger(a)).toBe(true);
          expect(a).toBeGreaterThanOrEqual(0);
          expect(a).toBeLessThanOrEqual(price);
          expect(b).toBeLessThanOrEqual(a);
        },
      ),
    );
  });
});

describe('refundsAcross: the refund of an immediate cancel spread over the payments of the period', () => {
  const start = new Date('2026-03-01T00:00:00Z');
  const upgradeAt = new Date('2026-03-11T00:00:00Z');
  const end = new Date('2026-03-31T00:00:00Z');

  it('refunds each payment the unused share of the time it covers, never more than it paid', () => {
    // 30.00 for the period, then 20.00 for the upgrade's 20 days; cancelled at once after the upgrade
    expect(refundsAcross([{ amount: 3000, coversFrom: start, refunded: 0 }, { amount: 2000, coversFrom: upgradeAt, refunded: 0 }], end, upgradeAt)).toEqual([2000, 2000]);
    // five days left: a sixth of each one's covered time left
    expect(refundsAcross([{ amount: 3000, coversFrom: start, refunded: 0 }, { amount: 2000, coversFrom: upgradeAt, refunded: 0 }], end, new Date('2026-03-26T00:00:00Z'))).toEqual([500, 500]);
  });

  it('rounds each share down in minor units and subtracts what was already refunded of it', () => {
    const at = new Date('2026-03-21T00:00:00Z'); // 10 of 30 days left of 10.00: 333.33 -> 333
    expect(refundsAcross([{ amount: 1000, coversFrom: start, refunded: 0 }], end, at)).toEqual([333]);
    expect(refundsAcross([{ amount: 1000, coversFrom: start, refunded: 300 }], end, at)).toEqual([33]);
    expect(refundsAcross([{ amount: 1000, coversFrom: start, refunded: 400 }], end, at)).toEqual([0]);
  });

  it('refunds nothing at or after the period end, and all of a payment whose time has not begun', () => {
    expect(refundsAcross([{ amount: 1000, coversFrom: start, refunded: 0 }], end, end)).toEqual([0]);
    expect(refundsAcross([{ amount: 1000, coversFrom: upgradeAt, refunded: 0 }], end, start)).toEqual([1000]);
  });
});
