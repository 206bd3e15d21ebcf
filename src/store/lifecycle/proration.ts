/**
 * Proration of a paid subscription period, in exact integer minor units (cents). All arithmetic is done
 * on BigInt milliseconds so no floating-point rounding can creep in; the result rounds down, so a refund
 * never exceeds the unused part of what was paid.
 */

export interface PaidPeriod {
  /** What was paid for the whole period, in minor units (a non-negative safe integer). */
  priceMinor: number;
  periodStart: Date;
  periodEnd: Date;
}

export class ProrationError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ProrationError';
  }
}

function checked(p: PaidPeriod): { price: bigint; start: bigint; end: bigint } {
  if (!Number.isSafeInteger(p.priceMinor) || p.priceMinor < 0) throw new ProrationError(`price must be a non-negative integer of minor units, got ${p.priceMinor}`);
  const start = p.periodStart.getTime();
  const end = p.periodEnd.getTime();
  if (!Number.isFinite(start) || !Number.isFinite(end)) throw new ProrationError('period start and end must be valid times');
  if (end <= start) throw new ProrationError('period end must be after period start');
  return { price: BigInt(p.priceMinor), start: BigInt(start), end: BigInt(end) };
}

/**
 * The share of the price that pays for the time from `at` to the period end: floor(price × unused / length).
 * Before the period starts the whole price is unused; at or after its end nothing is.
 */
export function unusedAmount(p: PaidPeriod, at: Date): number {
  const { price, start, end } = checked(p);
  const now = BigInt(at.getTime());
  if (now <= start) return Number(price);
  if (now >= end) return 0;
  return Number((price * (end - now)) / (end - start));
}

/** The refund of an immediate cancellation at `at`: the unused amount, or 0 when proration is off. */
export function cancellationRefund(p: PaidPeriod, at: Date, prorate: boolean): number {
  return prorate ? unusedAmount(p, at) : 0;
}

/** One payment that paid for (part of) the current period: from `coversFrom` to the period end. */
export interface PeriodPayment {
  /** Minor units paid. */
  amount: number;
  coversFrom: Date;
  /** Minor units already refunded of it. */
  refunded: number;
}

/**
 * The refund of an immediate prorated cancellation at `at`, spread over the payments that paid for the
 * period (the period's invoice and any upgrade's prorated charge): each refunds the unused share of what
 * it paid for the time it covers, less what was already refunded of it, never more than is left of it.
 * One amount per payment, in the same order, in integer minor units.
 */
export function refundsAcross(payments: PeriodPayment[], periodEnd: Date, at: Date): number[] {
  return payments.map((p) => {
    const left = p.amount - p.refunded;
    if (left <= 0 || p.coversFrom.getTime() >= periodEnd.getTime()) return 0;
    const unused = unusedAmount({ priceMinor: p.amount, periodStart: p.coversFrom, periodEnd }, at);
    return Math.max(0, Math.min(left, unused - p.refunded));
  });
}
