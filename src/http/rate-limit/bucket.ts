import type { Clock } from '../../lib/clock.js';
import type { Settings } from '../../settings/store.js';
import { ApiError } from '../errors.js';
import type { RateLimitStore, WindowQuery, WindowState } from './store.js';

export interface BucketLimits {
  limit: number;
  windowSeconds: number;
}

/** A named bucket whose limits come from settings at the moment of each hit. */
export class RateLimitBucket {
  constructor(
    readonly name: string,
    private readonly store: RateLimitStore,
    private readonly clock: Clock,
    private readonly limits: () => BucketLimits,
  ) {}

  private refusal(state: WindowState, limits: BucketLimits, nowMs: number): ApiError {
    const windowMs = limits.windowSeconds * 1000;
    const waitMs = state.oldestMs === null ? windowMs : state.oldestMs + windowMs - nowMs;
    const retryAfter = Math.max(1, Math.ceil(waitMs / 1000));
    return new ApiError(429, 'RateLimitError', 'Rate limit exceeded', {
      data: { limit: limits.limit, window_seconds: limits.windowSeconds, count: state.count, retry_after_seconds: retryAfter },
      headers: { 'retry-after': String(retryAfter) },
    });
  }

  /** `id`'s window in the store, with the limits of this moment. */
  private window(id: string): WindowQuery & { limits: BucketLimits } {
    const limits = this.limits();
    return { key: `${this.name}:${id}`, windowMs: limits.windowSeconds * 1000, limit: limits.limit, limits };
  }

  /** Counts one request for `id`, throwing the contract's 429 when the window is full. */
  async consume(id: string): Promise<void> {
    const { key, windowMs, limit, limits } = this.window(id);
    const nowMs = this.clock.nowMs();
    const state = await this.store.consume(key, nowMs, windowMs, limit);
    if (!state.allowed) throw this.refusal(state, limits, nowMs);
  }

  /**
   * consume(id), and in the same store round trip a reading of `other`'s window for `otherId`: throws
   * this bucket's 429 as consume() does, and returns `other`'s check of that reading, to be run where
   * that check belongs (it throws `other`'s 429 when the reading found the window used up).
   */
  async consumeAndRead(id: string, other: RateLimitBucket, otherId: string): Promise<() => void> {
    const mine = this.window(id);
    const theirs = other.window(otherId);
    const nowMs = this.clock.nowMs();
    const [state, reading] = await this.store.consumeAndPeek(mine, theirs, nowMs);
    if (!state.allowed) throw this.refusal(state, mine.limits, nowMs);
    return () => {
      if (!reading.allowed) throw other.refusal(reading, theirs.limits, nowMs);
    };
  }

  /** Throws the 429 when `id` has used up the window, without counting (for failure-counted buckets). */
  async check(id: string): Promise<void> {
    const { key, windowMs, limit, limits } = this.window(id);
    const nowMs = this.clock.nowMs();
    const state = await this.store.peek(key, nowMs, windowMs, limit);
    if (!state.allowed) throw this.refusal(state, limits, nowMs);
  }

  /** Counts one event (a failure) for `id`. */
  async record(id: string): Promise<void> {
    const { key, windowMs } = this.window(id);
    await this.store.record(key, this.clock.nowMs(), windowMs);
  }
}

export function settingsLimits(settings: Settings, requestsSetting: string, windowSetting: string | number): () => BucketLimits {
  return () => ({
    limit: settings.int(requestsSetting),
    windowSeconds: typeof windowSetting === 'number' ? windowSetting : settings.int(windowSetting),
  });
}
