import { describe, expect, it } from 'vitest';
import { ApiError } from '../../src/http/errors.js';
import { RateLimitBucket, type BucketLimits } from '../../src/http/rate-limit/bucket.js';
import { MemoryRateLimitStore } from '../../src/http/rate-limit/memory-store.js';
import { TestClock } from '../../src/lib/clock.js';

function bucket(limits: BucketLimits) {
  const clock = new TestClock('2026-03-01T12:00:00Z');
  const store = new MemoryRateLimitStore();
  let current = limits;
  const b = new RateLimitBucket('test', store, clock, () => current);
  return { b, clock, store, setLimits: (l: BucketLimits) => (current = l) };
}

async function refusal(p: Promise<unknown>): Promise<ApiError> {
  try {
    await p;
  } catch (e) {
    if (e instanceof ApiError) return e;
    throw e;
  }
  throw new Error('expected a refusal');
}

describe('rate-limit bucket (contract rule 3)', () => {
  it('answers 429 RateLimitError with integer data {limit, window_seconds, count, retry_after_seconds}', async () => {
    const { b } = bucket({ limit: 2, windowSeconds: 60 });
    await b.consume('ip');
    await b.consume('ip');
    const err = await refusal(b.consume('ip'));
    expect(err.status).toBe(429);
    expect(err.errortype).toBe('RateLimitError');
    expect(err.data).toStrictEqual({ limit: 2, window_seconds: 60, count: 2, retry_after_seconds: 60 });
    for (const v of Object.values(err.data)) expect(Number.isInteger(v)).toBe(true);
  });

  it('carries a Retry-After header equal to retry_after_seconds', async () => {
    const { b, clock } = bucket({ limit: 1, windowSeconds: 60 });
    await b.consume('ip');
    clock.advanceSeconds(45);
    const err = await refusal(b.consume('ip'));
    expect(err.data.retry_after_seconds).toBe(15);
    expect(err.headers).toStrictEqual({ 'retry-after': '15' });
  });

  it('waits until the oldest counted request leaves the window, not the newest', async () => {
    const { b, clock } = bucket({ limit: 3, windowSeconds: 100 });
    await b.consume('ip'); // t = 0
    clock.advanceSeconds(30);
    await b.consume('ip'); // t = 30
    clock.advanceSeconds(30);
    await b.consume('ip'); // t = 60
    clock.advanceSeconds(10); // t = 70: the hit at 0 leaves at 100
    const err = await refusal(b.consume('ip'));
    expect(err.data).toStrictEqual({ limit: 3, window_seconds: 100, count: 3, retry_after_seconds: 30 });
    clock.advanceSeconds(29);
    expect((await refusal(b.consume('ip'))).data.retry_after_seconds).toBe(1);
    clock.advanceSeconds(1);
    await expect(b.consume('ip')).resolves.toBeUndefined();
    // Now the oldest counted is the hit at 30, leaving at 130.
    expect((await refusal(b.consume('ip'))).data).toStrictEqual({ limit: 3, window_seconds: 100, count: 3, retry_after_seconds: 30 });
  });

  it('rounds a partial second of waiting up, so a client that obeys Retry-After gets in', async () => {
    const { b, clock } = bucket({ limit: 1, windowSeconds: 10 });
    await b.consume('ip');
    clock.advance(9_001);
    const err = await refusal(b.consume('ip'));
    expect(err.data.retry_after_seconds).toBe(1);
    clock.advance(999);
    await expect(b.consume('ip')).resolves.toBeUndefined();
  });

  it('check refuses without counting, and record counts failures only', async () => {
    const { b, clock } = bucket({ limit: 2, windowSeconds: 900 });
    for (let i = 0; i < 5; i++) await b.check('ip');
    await b.record('ip');
    clock.advanceSeconds(100);
    await b.record('ip');
    const err = await refusal(b.check('ip'));
    expect(err.data).toStrictEqual({ limit: 2, window_seconds: 900, count: 2, retry_after_seconds: 800 });
    expect(err.headers['retry-after']).toBe('800');
  });

  it('reads its limits at each hit, so a settings change applies to the next request', async () => {
    const { b, setLimits } = bucket({ limit: 1, windowSeconds: 60 });
    await b.consume('ip');
    await refusal(b.consume('ip'));
    setLimits({ limit: 2, windowSeconds: 60 });
    await expect(b.consume('ip')).resolves.toBeUndefined();
  });

  it('keeps separate windows per id and per bucket name', async () => {
    const clock = new TestClock('2026-03-01T12:00:00Z');
    const store = new MemoryRateLimitStore();
    const general = new RateLimitBucket('general', store, clock, () => ({ limit: 1, windowSeconds: 60 }));
    const auth = new RateLimitBucket('auth', store, clock, () => ({ limit: 1, windowSeconds: 60 }));
    await general.consume('1.2.3.4');
    await expect(general.consume('1.2.3.5')).resolves.toBeUndefined();
    await expect(auth.consume('1.2.3.4')).resolves.toBeUndefined();
    expect((await refusal(general.consume('1.2.3.4'))).status).toBe(429);
  });
});

describe('rate-limit bucket: consumeAndRead (one store round trip for two buckets)', () => {
  it("counts on its own bucket, refuses with its own 429, and hands back the other bucket's check", async () => {
    const { b: general, clock, store } = bucket({ limit: 2, windowSeconds: 60 });
    const failedAuth = new RateLimitBucket('auth', store, clock, () => ({ limit: 1, windowSeconds: 900 }));

    const open = await general.consumeAndRead('ip', failedAuth, 'ip');
    expect(() => open()).not.toThrow();
    await failedAuth.record('ip');
    clock.advanceSeconds(30);

    const blocked = await general.consumeAndRead('ip', failedAuth, 'ip');
    let err: unknown;
    try {
      blocked();
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(ApiError);
    expect((err as ApiError).status).toBe(429);
    expect((err as ApiError).data).toStrictEqual({ limit: 1, window_seconds: 900, count: 1, retry_after_seconds: 870 });
    // The failed-auth window was only read, never counted.
    expect((await store.peek('auth:ip', clock.nowMs(), 900_000, 5)).count).toBe(1);

    const own = await refusal(general.consumeAndRead('ip', failedAuth, 'ip'));
    expect(own.data).toStrictEqual({ limit: 2, window_seconds: 60, count: 2, retry_after_seconds: 30 });
  });
});
