import { ReadCache } from './read-cache.js';
import { Reloader } from './reloader.js';

export interface ReadCachesOptions {
  /**
   * The database handle whose reads the caches serve (see ReadCache.through): the server's own, never a
   * transaction. None: they serve no read (a process without a change feed, the CLI).
   */
  through?: object;
  /** How long an entry is kept however quiet the change feed (default one minute). */
  ttlMs?: number;
}

/** A cache of what was read from some tables: a write to any of them forgets every entry. */
export interface TablesCacheDeclaration {
  dependsOn: Iterable<string>;
  maxEntries: number;
}

/**
 * A cache of one table's rows by primary key: a row's notification ('<table>:<key>') forgets that row,
 * any other write to the table (a truncate, or this process's write) every row.
 */
export interface RowsCacheDeclaration {
  table: string;
  maxEntries: number;
}

/**
 * The in-process read caches of one server (see ReadCache), named and declared by their owners with the
 * tables they depend on, and what keeps them right: the change feed's notifications ('<table>:<primary
 * key>' from the row-change triggers, for every process's writes), this process's own writes, and the
 * feed's state. Things held elsewhere (the settings, the plugin flags) are reloaded on their tables'
 * notifications (reloadOn).
 */
export class ReadCaches {
  private readonly through: object | undefined;
  private readonly ttlMs: number;
  private readonly byName = new Map<string, ReadCache<unknown, unknown>>();
  /** Per table: the caches a write to it forgets entirely. */
  private readonly dependents = new Map<string, Array<ReadCache<unknown, unknown>>>();
  /** Per table: the caches of its rows by primary key. */
  private readonly rowCaches = new Map<string, Array<ReadCache<number, unknown>>>();
  /** Per table: what its notifications reload. */
  private readonly reloadersOf = new Map<string, Reloader[]>();
  private readonly reloaders: Reloader[] = [];
  private isLive = false;

  constructor(opts: ReadCachesOptions = {}) {
    this.through = opts.through;
    this.ttlMs = opts.ttlMs ?? 60_000;
  }

  /** A cache of what is read from `dependsOn`. */
  declare<K, V>(name: string, declaration: TablesCacheDeclaration): ReadCache<K, V> {
    const cache = this.add<K, V>(name, declaration.maxEntries);
    for (const table of declaration.dependsOn) listAt(this.dependents, table).push(cache as ReadCache<unknown, unknown>);
    return cache;
  }

  /** A cache of a table's rows by (integer) primary key. */
  declareRows<V>(name: string, declaration: RowsCacheDeclaration): ReadCache<number, V> {
    const cache = this.add<number, V>(name, declaration.maxEntries);
    listAt(this.rowCaches, declaration.table).push(cache as ReadCache<number, unknown>);
    return cache;
  }

  /**
   * Reloads something held outside these caches on every notification from `table`, and when the feed
   * is back live (whatever was missed meanwhile). A request waits for a reload under way (settling).
   */
  reloadOn(table: string, load: () => Promise<void>): Reloader {
    const reloader = new Reloader(load);
    listAt(this.reloadersOf, table).push(reloader);
    this.reloaders.push(reloader);
    return reloader;
  }

  /** A declared cache by name (for stats and tests). */
  named(name: string): ReadCache<unknown, unknown> | undefined {
    return this.byName.get(name);
  }

  get live(): boolean {
    return this.isLive;
  }

  /** The reloads under way, which a request waits for (undefined when none: every request asks). */
  settling(): Promise<unknown> | undefined {
    let first: Promise<void> | undefined;
    let all: Array<Promise<void>> | undefined;
    for (let i = 0; i < this.reloaders.length; i++) {
      const pending = this.reloaders[i]!.pending;
      if (pending === undefined) continue;
      if (first === undefined) first = pending;
      else (all ??= [first]).push(pending);
    }
    return all ? Promise.all(all) : first;
  }

  /** The feed's state: either way every cache starts over; back live, what may have been missed is reloaded. */
  setLive(isLive: boolean): void {
    this.isLive = isLive;
    for (const cache of this.byName.values()) cache.setLive(isLive);
    if (isLive) for (const reloader of this.reloaders) reloader.request();
  }

  /** A notification from the row-change triggers: '<table>:<primary key>', or '<table>' (a truncate). */
  notified(payload: string): void {
    const colon = payload.indexOf(':');
    const table = colon < 0 ? payload : payload.slice(0, colon);
    const key = colon < 0 ? undefined : payload.slice(colon + 1);
    this.tableChanged(table, key);
    const reloaders = this.reloadersOf.get(table);
    if (reloaders) for (const reloader of reloaders) reloader.request();
  }

  /**
   * This process's write became visible (PostgreSQL; see DatabaseChanges.onLocalWrite): forget at once
   * what it wrote, before its notification arrives. Null: tables unknown, forget everything.
   */
  wrote(tables: ReadonlySet<string> | null): void {
    if (tables === null) {
      for (const cache of this.byName.values()) cache.invalidate();
      return;
    }
    for (const table of tables) this.tableChanged(table, undefined);
  }

  private add<K, V>(name: string, maxEntries: number): ReadCache<K, V> {
    if (this.byName.has(name)) throw new Error(`read cache ${name} declared twice`);
    const cache = new ReadCache<K, V>({ maxEntries, ttlMs: this.ttlMs, ...(this.through ? { through: this.through } : {}) });
    cache.setLive(this.isLive);
    this.byName.set(name, cache as ReadCache<unknown, unknown>);
    return cache;
  }

  private tableChanged(table: string, key: string | undefined): void {
    const dependents = this.dependents.get(table);
    if (dependents) for (const cache of dependents) cache.invalidate();
    const rows = this.rowCaches.get(table);
    if (!rows) return;
    const id = key === undefined || !/^\d{1,15}$/.test(key) ? undefined : Number(key);
    for (const cache of rows) {
      if (id === undefined) cache.invalidate();
      else cache.forget(id);
    }
  }
}

function listAt<T>(map: Map<string, T[]>, key: string): T[] {
  let list = map.get(key);
  if (!list) map.set(key, (list = []));
  return list;
}
