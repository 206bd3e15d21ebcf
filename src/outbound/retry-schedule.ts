import { randomInt } from 'node:crypto';

/**
 * The wait after each failed attempt of a webhook delivery or a member email (DESIGN 15: one schedule for
 * both): the first attempt is at once, then 5 s, 5 min, 30 min,
 * 2 h, 5 h, 10 h, 14 h, 20 h and 24 h. After the last one fails the delivery is given up (status failed);
 * a delivery can still be redelivered by hand.
 */
export const RETRY_DELAYS_SECONDS = [5, 300, 1800, 7200, 18000, 36000, 50400, 72000, 86400] as const;

/** Up to this share of a wait is added at random, so that many deliveries failing together do not retry together. */
export const JITTER_SHARE = 0.1;

/** The longest a Retry-After answer may push a retry. */
export const MAX_RETRY_AFTER_SECONDS = 86400;

/** Reads Retry-After (seconds, or an HTTP date) as seconds from now; null when absent or unreadable. */
export function parseRetryAfter(value: string | undefined, nowMs: number): number | null {
  if (!value) return null;
  const trimmed = value.trim();
  if (/^\d+$/.test(trimmed)) return Number(trimmed);
  const at = Date.parse(trimmed);
  return Number.isNaN(at) ? null : Math.max(0, Math.ceil((at - nowMs) / 1000));
}

/**
 * Seconds until the next attempt after `failedAttempts` failures, or null when the schedule is spent. A
 * Retry-After later than the schedule's wait is honoured (up to a day).
 */
export function retryDelaySeconds(failedAttempts: number, retryAfterSeconds: number | null, random: () => number = () => randomInt(0, 1_000_000) / 1_000_000): number | null {
  const base = RETRY_DELAYS_SECONDS[failedAttempts - 1];
  if (base === undefined) return null;
  const jittered = base + base * JITTER_SHARE * random();
  return retryAfterSeconds !== null ? Math.max(jittered, Math.min(retryAfterSeconds, MAX_RETRY_AFTER_SECONDS)) : jittered;
}
