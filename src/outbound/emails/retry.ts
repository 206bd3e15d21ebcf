import { randomInt } from 'node:crypto';

/**
 * When a failed member email is tried again (DESIGN 15, the webhook schedule): the first attempt is at
 * once, then 5 s, 5 min, 30 min, 2 h, 5 h, 10 h, 14 h, 20 h and 24 h after each failure. After the last
 * the email is given up (failed).
 */
export const RETRY_DELAYS_SECONDS = [5, 300, 1800, 7200, 18000, 36000, 50400, 72000, 86400] as const;

/** Attempts in all: the first and one per delay. */
export const MAX_ATTEMPTS = RETRY_DELAYS_SECONDS.length + 1;

/** Up to this share of the delay is added at random, so that failures of one outage do not retry in step. */
export const JITTER_SHARE = 0.1;

/** Milliseconds until the next attempt after `attempts` attempts all failed; null when none is left. */
export function retryDelayMs(attempts: number, random: (below: number) => number = randomInt): number | null {
  const base = RETRY_DELAYS_SECONDS[attempts - 1];
  if (base === undefined) return null;
  const ms = base * 1000;
  return ms + random(Math.floor(ms * JITTER_SHARE) + 1);
}
