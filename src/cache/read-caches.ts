import type { Kysely } from 'kysely';
import type { DB } from '../db/types.js';
import type { KeyRow } from '../accounts/auth/authenticate.js';
import type { Model, Row } from '../models/define.js';
import type { UserTier } from '../tiers/features.js';
import { ReadCache } from './read-cache.js';
import { Reloader } from './reloader.js';

/** Tables whose rows public reads serve from memory (the CRUD single read of Post, Page, Product, Event, SubscriptionTier). */
const MODEL_TABLES = new Set(['pst_posts', 'pag_pages', 'pro_products', 'evt_events', 'sbt_subscription_tiers']);
/** What a key row is read from: a write to any of these forgets every key row. */
const KEY_ROW_TABLES = new Set(['apk_api_keys', 'usr_users', 'grm_group_members', 'sbt_subscription_tiers']);
const USER_TIER_TABLES = new Set(['grm_group_members', 'sbt_subscription_tiers']);
const CATALOGUE_TABLES = new Set(['sbt_subscription_tiers', 'pro_products']);

export type CatalogueRows = Row[];

/**
 * A listing's page as its statement decided it: the primary keys in order and num_results. It stays
 * right while the model's table is unchanged and the request's time is in [from, until) (see
 * loadCollection).
 */
export interface ListedPage {
  total: number;
  keys: number[];
  /** The statement's times (the reader's and the tier gate's), as epoch ms; null where unused. */
  from: { now: number | null; openNow: number | null };
  /** The first instant after `from` at which a row's verdict could change; null when none can. */
  untilMs: number | null;
}

export interface ReadCacheLimits {
  keyRows?: number;
  userTiers?: number;
  /** Per model table. */
  modelRows?: number;
  /** Listing pages per model table. */
  listings?: number;
  ttlMs?: number;
}

/**
 * The in-process read caches of one server (see ReadCache), and what keeps them right: the change feed's
 * notifications ('<table>:<primary key>' from the row-change triggers, for every process's writes), this
 * process's own writes, and the feed's state. The settings and plugin flags, held by their own stores,
 * are reloaded on their tables' notifications.
 */
export class ReadCaches {
  readonly keyRows: ReadCache<string, KeyRow>;
  readonly userTiers: ReadCache<number, UserTier | null>;
  /** 'tiers' and 'products': the tier catalogue's two reads. */
  readonly catalogue: ReadCache<'tiers' | 'products', CatalogueRows>;
  private readonly modelRows = new Map<string, ReadCache<number, Row>>();
  /** Listing pages by model table; a write to the table forgets all of them (any page may hold the row). */
  private readonly listings = new Map<string, ReadCache<string, ListedPage>>();
  private readonly all: Array<ReadCache<unknown, unknown>>;
  readonly settings: Reloader;
  readonly plugins: Reloader;

  constructor(reload: { settings: () => Promise<void>; plugins: () => Promise<void> }, limits: ReadCacheLimits = {}) {
    const ttlMs = limits.ttlMs ?? 60_000;
    this.keyRows = new ReadCache({ maxEntries: limits.keyRows ?? 10_000, ttlMs });
    this.userTiers = new ReadCache({ maxEntries: limits.userTiers ?? 10_000, ttlMs });
    this.catalogue = new ReadCache({ maxEntries: 2, ttlMs });
    for (const table of MODEL_TABLES) {
      this.modelRows.set(table, new ReadCache({ maxEntries: limits.modelRows ?? 5_000, ttlMs }));
      this.listings.set(table, new ReadCache({ maxEntries: limits.listings ?? 500, ttlMs }));
    }
    this.all = [this.keyRows, this.userTiers, this.catalogue, ...this.modelRows.values(), ...this.listings.values()] as Array<ReadCache<unknown, unknown>>;
    this.settings = new Reloader(reload.settings);
    this.plugins = new Reloader(reload.plugins);
  }

  get live(): boolean {
    return this.keyRows.live;
  }

  /**
   * The cache of a model's rows by primary key, for a model whose rows are cached: a public-read model
   * whose is-viewable check (if any) can also be asked of a row in memory.
   */
  rowsOf(model: Model): ReadCache<number, Row> | undefined {
    if (model.viewable && !model.viewableRow) return undefined;
    return this.modelRows.get(model.table);
  }

  /** The cache of a model's listing pages: for a model whose rows are cached (listings take them from there). */
  listingsOf(model: Model): ReadCache<string, ListedPage> | undefined {
    return this.rowsOf(model) && this.listings.get(model.table);
  }

  /** A reload of the settings or plugin flags under way, which a request waits for. */
  settling(): Promise<unknown> | undefined {
    const s = this.settings.pending;
    const p = this.plugins.pending;
    return s && p ? Promise.all([s, p]) : (s ?? p);
  }

  /** The feed's state: either way every cache starts over; back live, what may have been missed is reloaded. */
  setLive(isLive: boolean): void {
    for (const cache of this.all) cache.setLive(isLive);
    if (isLive) {
      this.settings.request();
      this.plugins.request();
    }
  }

  /** A notification from the row-change triggers: '<table>:<primary key>', or '<table>' (a truncate). */
  notified(payload: string): void {
    const colon = payload.indexOf(':');
    const table = colon < 0 ? payload : payload.slice(0, colon);
    const key = colon < 0 ? undefined : payload.slice(colon + 1);
    this.tableChanged(table, key);
    if (table === 'stg_settings') this.settings.request();
    else if (table === 'plg_plugins') this.plugins.request();
  }

  /**
   * This process's write became visible (PostgreSQL; see DatabaseChanges.onLocalWrite): forget at once
   * what it wrote, before its notification arrives. Null: tables unknown, forget everything.
   */
  wrote(tables: ReadonlySet<string> | null): void {
    if (tables === null) {
      for (const cache of this.all) cache.invalidate();
      return;
    }
    for (const table of tables) this.tableChanged(table, undefined);
  }

  private tableChanged(table: string, key: string | undefined): void {
    if (KEY_ROW_TABLES.has(table)) this.keyRows.invalidate();
    if (USER_TIER_TABLES.has(table)) this.userTiers.invalidate();
    if (CATALOGUE_TABLES.has(table)) this.catalogue.invalidate();
    this.listings.get(table)?.invalidate();
    const rows = this.modelRows.get(table);
    if (!rows) return;
    const id = key === undefined || !/^\d{1,15}$/.test(key) ? undefined : Number(key);
    if (id === undefined) rows.invalidate();
    else rows.forget(id);
  }
}

/** Each server's caches, by the Kysely instance its reads go through (a transaction is another instance). */
const attached = new WeakMap<Kysely<DB>, ReadCaches>();

export function attachReadCaches(db: Kysely<DB>, caches: ReadCaches): () => void {
  attached.set(db, caches);
  return () => {
    if (attached.get(db) === caches) attached.delete(db);
  };
}

/**
 * The caches serving reads through `db`: none inside a transaction (which must see its own writes and
 * lock what it reads) and none in a process without a change feed (the CLI).
 */
export function readCachesOf(db: Kysely<DB>): ReadCaches | undefined {
  return attached.get(db);
}
