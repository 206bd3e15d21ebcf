/**
 * Rows read from the database, kept in memory while nothing could have changed them (each declared in
 * ReadCaches by its owner, with the tables it is read from: e.g. the key rows of presented keys, users'
 * tiers, rows of public-read models).
 *
 * A cached row is only used while nothing could have changed it:
 * - it is used only while the change feed is live (a LISTEN on the row-change triggers' channel); while
 *   the feed is down every read goes to the database, and the cache starts empty when it is back;
 * - the owner forgets a key (or everything) on a notification from the triggers, which fire on every
 *   write by any process (another node, the CLI through the socket, psql), and after this process's own
 *   writes;
 * - a read that was under way when anything was forgotten is not kept (it may have seen the old row);
 * - entries expire after ttlMs however quiet the channel, and at most maxEntries are kept (the least
 *   recently used go first). Absent rows (`undefined`) are never kept.
 * A row is data, not a verdict: whatever is decided from it (the tier gate, permissions, time rules) is
 * decided again on every request. Callers must not mutate what they get.
 */
export class ReadCache<K, V> {
  /** In recency order: the first entry is the least recently used. */
  private readonly entries = new Map<K, { value: V; expiresMs: number }>();
  /** Reads under way, shared by concurrent misses of one key (only while nothing was forgotten since). */
  private readonly reading = new Map<K, { generation: number; value: Promise<V | undefined> }>();
  private generation = 0;
  private isLive = false;
  /** Reads answered from memory, since the start (for stats and tests). */
  private hitCount = 0;
  readonly maxEntries: number;
  readonly ttlMs: number;
  /** The handle whose reads this cache may serve (see through). */
  private readonly servesReadsThrough: object | undefined;

  constructor(opts: { ttlMs?: number; maxEntries?: number; through?: object } = {}) {
    this.maxEntries = Math.max(1, opts.maxEntries ?? 10_000);
    this.ttlMs = opts.ttlMs ?? 60_000;
    this.servesReadsThrough = opts.through;
  }

  /**
   * This cache, for a read made through `db`, if the read may be served from it: only a read through the
   * database handle the cache was made for. A transaction is another handle (it must see its own writes
   * and lock what it reads), so nothing read through one comes from memory; a cache made for no handle
   * (a process without a change feed, the CLI) serves nothing.
   */
  through(db: object): this | undefined {
    return db === this.servesReadsThrough ? this : undefined;
  }

  get live(): boolean {
    return this.isLive;
  }

  get size(): number {
    return this.entries.size;
  }

  get hits(): number {
    return this.hitCount;
  }

  /** The feed's state; either way the cache starts over. */
  setLive(isLive: boolean): void {
    this.invalidate();
    this.isLive = isLive;
  }

  /** Forget every entry, including any read now under way. */
  invalidate(): void {
    this.generation++;
    this.entries.clear();
    this.reading.clear();
  }

  /** Forget one key, and any read now under way (of any key: it may have seen the old row). */
  forget(key: K): void {
    this.generation++;
    this.entries.delete(key);
    this.reading.clear();
  }

  /**
   * The cached value of `key`, or `read()`'s (kept when it is defined and nothing changed meanwhile). A
   * kept value that `usable` refuses is read again (a value true only for a while, decided by the caller).
   */
  async get(key: K, nowMs: number, read: () => Promise<V | undefined>, usable?: (value: V) => boolean): Promise<V | undefined> {
    if (!this.isLive) return read();
    const hit = this.entries.get(key);
    if (hit !== undefined) {
      this.entries.delete(key);
      if (hit.expiresMs > nowMs && (usable === undefined || usable(hit.value))) {
        this.entries.set(key, hit);
        this.hitCount++;
        return hit.value;
      }
    }
    const generation = this.generation;
    const under = this.reading.get(key);
    if (under !== undefined && under.generation === generation) return under.value;
    const value = read();
    this.reading.set(key, { generation, value });
    try {
      const row = await value;
      if (row !== undefined && this.isLive && generation === this.generation) this.remember(key, row, nowMs);
      return row;
    } finally {
      if (this.reading.get(key)?.value === value) this.reading.delete(key);
    }
  }

  private remember(key: K, value: V, nowMs: number): void {
    this.entries.delete(key);
    while (this.entries.size >= this.maxEntries) {
      const oldest = this.entries.keys().next().value as K;
      this.entries.delete(oldest);
    }
    this.entries.set(key, { value, expiresMs: nowMs + this.ttlMs });
  }
}
