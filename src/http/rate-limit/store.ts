/** What a sliding-log window holds for one key at one instant. */
export interface WindowState {
  /** Whether this hit was within the limit (consume) or the window has room (peek). */
  allowed: boolean;
  /** Hits counted in the window, after this one if it was counted. */
  count: number;
  /** Time of the oldest counted hit, or null when the window is empty. */
  oldestMs: number | null;
}

/** One key's window and limit, for consumeAndPeek. */
export interface WindowQuery {
  key: string;
  windowMs: number;
  limit: number;
}

/**
 * A sliding log per key: a hit at time t is counted while t > now - window. Refused hits are not
 * recorded, so a caller that keeps knocking still gets in once the oldest counted hit leaves the window.
 */
export interface RateLimitStore {
  /** Counts the hit when fewer than `limit` are in the window. Atomic per key. */
  consume(key: string, nowMs: number, windowMs: number, limit: number): Promise<WindowState>;
  /** Reads the window without counting (allowed means count < limit). */
  peek(key: string, nowMs: number, windowMs: number, limit: number): Promise<WindowState>;
  /**
   * consume() on one key and peek() on another in one atomic step (one round trip to a shared store):
   * a key-authenticated request counts against its general bucket and reads its failed-auth window.
   */
  consumeAndPeek(consumed: WindowQuery, peeked: WindowQuery, nowMs: number): Promise<[WindowState, WindowState]>;
  /** Counts a hit unconditionally (used for failures). */
  record(key: string, nowMs: number, windowMs: number): Promise<void>;
  close(): Promise<void>;
}
