import type { RateLimitStore, WindowQuery, WindowState } from './store.js';

interface Log {
  hits: number[];
  windowMs: number;
}

const SWEEP_EVERY = 1000;

/** One node's buckets in memory: exact, bounded by sweeping logs whose window has emptied. */
export class MemoryRateLimitStore implements RateLimitStore {
  private readonly logs = new Map<string, Log>();
  private ops = 0;

  /** How many keys have a log in memory (what the sweep keeps bounded). */
  get size(): number {
    return this.logs.size;
  }

  private prune(key: string, nowMs: number, windowMs: number): Log {
    // Sweep before taking the key's log: sweeping after would drop that log from the map while the
    // caller still holds it, and the hit it is about to count would be lost.
    if (++this.ops % SWEEP_EVERY === 0) this.sweep(nowMs);
    let log = this.logs.get(key);
    if (!log) {
      log = { hits: [], windowMs };
      this.logs.set(key, log);
    }
    log.windowMs = windowMs;
    const floor = nowMs - windowMs;
    let drop = 0;
    while (drop < log.hits.length && log.hits[drop]! <= floor) drop++;
    if (drop > 0) log.hits.splice(0, drop);
    return log;
  }

  private sweep(nowMs: number): void {
    for (const [key, log] of this.logs) {
      const newest = log.hits.at(-1);
      if (newest === undefined || newest <= nowMs - log.windowMs) this.logs.delete(key);
    }
  }

  private state(log: Log, allowed: boolean): WindowState {
    return { allowed, count: log.hits.length, oldestMs: log.hits[0] ?? null };
  }

  private consumeNow(key: string, nowMs: number, windowMs: number, limit: number): WindowState {
    const log = this.prune(key, nowMs, windowMs);
    if (log.hits.length >= limit) return this.state(log, false);
    log.hits.push(nowMs);
    return this.state(log, true);
  }

  private peekNow(key: string, nowMs: number, windowMs: number, limit: number): WindowState {
    const log = this.prune(key, nowMs, windowMs);
    return this.state(log, log.hits.length < limit);
  }

  async consume(key: string, nowMs: number, windowMs: number, limit: number): Promise<WindowState> {
    return this.consumeNow(key, nowMs, windowMs, limit);
  }

  async peek(key: string, nowMs: number, windowMs: number, limit: number): Promise<WindowState> {
    return this.peekNow(key, nowMs, windowMs, limit);
  }

  async consumeAndPeek(consumed: WindowQuery, peeked: WindowQuery, nowMs: number): Promise<[WindowState, WindowState]> {
    return [this.consumeNow(consumed.key, nowMs, consumed.windowMs, consumed.limit), this.peekNow(peeked.key, nowMs, peeked.windowMs, peeked.limit)];
  }

  async record(key: string, nowMs: number, windowMs: number): Promise<void> {
    this.prune(key, nowMs, windowMs).hits.push(nowMs);
  }

  async close(): Promise<void> {
    this.logs.clear();
  }
}
