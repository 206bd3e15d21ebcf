import type { Kysely } from 'kysely';
import type { DB } from '../db/types.js';
import type { Clock } from '../lib/clock.js';
import type { Settings } from '../settings/store.js';
import { storeActive } from '../tiers/gate-context.js';
import { defaultStoreDeps, type StoreDeps } from './deps.js';
import type { StoreContext } from './events.js';

/**
 * The store component of one process (services.store). Active only while the settings products_active
 * and subscriptions_active are both true; inactive, no billing code runs (webhooks are verified,
 * acknowledged and logged, and assign nothing).
 */
export class StoreSystem {
  /** Replaceable in tests (fake provider servers, test trust roots). */
  deps: StoreDeps;

  constructor(
    private readonly db: Kysely<DB>,
    private readonly settings: Settings,
    private readonly clock: Clock,
  ) {
    this.deps = defaultStoreDeps(clock);
  }

  active(): boolean {
    return storeActive(this.settings);
  }

  context(db: Kysely<DB> = this.db): StoreContext {
    return { db, settings: this.settings, clock: this.clock, deps: this.deps };
  }
}

export type { StoreDeps } from './deps.js';
export type { StoreEvent, StoreEventKind } from './events.js';
