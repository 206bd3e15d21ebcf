/**
 * The key rows (key, user and tier, as the authentication stage reads them) of recently presented public
 * keys, so that an authenticated request need not ask the database for its key on PostgreSQL, where that
 * round trip cost as much as the rest of a single-row read.
 *
 * A cached row is only used while nothing could have changed it:
 * - it is used only while the change feed is live (a LISTEN on the principal-change triggers' channel);
 *   while the feed is down every request reads its key, and the cache starts empty when it is back;
 * - everything is forgotten on a notification (another process or node wrote a key, user, membership or
 *   tier) and after every write statement or committed transaction of this process;
 * - a read that was under way when the cache was cleared is not kept (it may have seen the old row);
 * - entries expire after ttlMs however quiet the channel, and at most maxEntries are kept (oldest go
 *   first). Unknown keys are never cached.
 * The row is data, not a verdict: the secret, revocation, activity, validity window and IP are checked on
 * every request as before.
 */
export class KeyRowCache<Row> {
  private readonly entries = new Map<string, { row: Row; expiresMs: number }>();
  private generation = 0;
  private isLive = false;

  constructor(
    private readonly opts: { ttlMs?: number; maxEntries?: number } = {},
  ) {}

  get live(): boolean {
    return this.isLive;
  }

  get size(): number {
    return this.entries.size;
  }

  /** The feed's state; either way the cache starts over. */
  setLive(isLive: boolean): void {
    this.invalidate();
    this.isLive = isLive;
  }

  /** Forget every row, including any read now under way. */
  invalidate(): void {
    this.generation++;
    this.entries.clear();
  }

  /** The cached row of `key`, or `read()`'s (kept when it is a row and nothing changed meanwhile). */
  async get(key: string, nowMs: number, read: () => Promise<Row | undefined>): Promise<Row | undefined> {
    if (!this.isLive) return read();
    const hit = this.entries.get(key);
    if (hit !== undefined) {
      if (hit.expiresMs > nowMs) return hit.row;
      this.entries.delete(key);
    }
    const generation = this.generation;
    const row = await read();
    if (row !== undefined && this.isLive && generation === this.generation) this.remember(key, row, nowMs);
    return row;
  }

  private remember(key: string, row: Row, nowMs: number): void {
    if (this.entries.size >= (this.opts.maxEntries ?? 10_000)) {
      const oldest = this.entries.keys().next().value;
      if (oldest !== undefined) this.entries.delete(oldest);
    }
    this.entries.set(key, { row, expiresMs: nowMs + (this.opts.ttlMs ?? 60_000) });
  }
}
