import type { ReadCache } from '../cache/read-cache.js';
import type { ReadCaches } from '../cache/read-caches.js';
import type { UserTierCache } from '../tiers/features.js';
import type { ListedPage, Model, ModelCaches, Row } from './define.js';

/**
 * Tables whose rows public reads serve from memory (the CRUD reads of Post, Page, Product, Event,
 * SubscriptionTier). Each needs the row-change trigger of migration 0028, or other processes' writes
 * would go unseen.
 */
const CACHED_MODEL_TABLES = ['pst_posts', 'pag_pages', 'pro_products', 'evt_events', 'sbt_subscription_tiers'];
/** What the tier catalogue is read from. */
const CATALOGUE_TABLES = ['sbt_subscription_tiers', 'pro_products'];

/** The model reads' caches, declared in the server's read caches. */
export class ModelReadCaches implements ModelCaches {
  readonly catalogue: ReadCache<'tiers' | 'products', Row[]>;
  private readonly rows = new Map<string, ReadCache<number, Row>>();
  /** Listing pages by model table; a write to the table forgets all of them (any page may hold the row). */
  private readonly listings = new Map<string, ReadCache<string, ListedPage>>();

  constructor(
    caches: ReadCaches,
    readonly userTiers: UserTierCache,
  ) {
    this.catalogue = caches.declare('catalogue', { dependsOn: CATALOGUE_TABLES, maxEntries: 2 });
    for (const table of CACHED_MODEL_TABLES) {
      this.rows.set(table, caches.declareRows(`rows:${table}`, { table, maxEntries: 5_000 }));
      this.listings.set(table, caches.declare(`listings:${table}`, { dependsOn: [table], maxEntries: 500 }));
    }
  }

  rowsOf(model: Model): ReadCache<number, Row> | undefined {
    if (model.viewable && !model.viewableRow) return undefined;
    return this.rows.get(model.table);
  }

  listingsOf(model: Model): ReadCache<string, ListedPage> | undefined {
    return this.rowsOf(model) && this.listings.get(model.table);
  }
}
