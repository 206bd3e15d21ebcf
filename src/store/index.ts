import type { Kysely } from 'kysely';
import type { DB } from '../db/types.js';
import type { Clock } from '../lib/clock.js';
import type { Settings } from '../settings/store.js';
import { storeActive } from '../settings/store-active.js';
import { defaultStoreDeps, type StoreDeps } from './deps.js';
import type { StoreContext } from './events.js';
import type { CardProcessorClient } from './providers/card-processor.js';
import type { WalletProviderClient } from './providers/wallet-provider.js';

/**
 * The store component of one process (services.store). Active only while the settings products_active
 * and subscriptions_active are both true and at least one billing source is configured (storeActive);
 * inactive, no billing code runs (webhooks are verified, acknowledged and logged, and assign nothing).
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

  /** Outbound card-processor calls (cancel, resume, change plan, refund, checkout); throws when unconfigured. */
  cardProcessor(): CardProcessorClient {
    return this.deps.cardProcessor(this.settings);
  }

  /** Outbound wallet-provider calls (cancel, suspend, resume, change plan, refund); throws when unconfigured. */
  walletProvider(): WalletProviderClient {
    return this.deps.walletProvider(this.settings);
  }

  context(db: Kysely<DB> = this.db): StoreContext {
    return { db, settings: this.settings, clock: this.clock, deps: this.deps };
  }
}

export type { StoreDeps } from './deps.js';
export type { StoreEvent, StoreEventKind } from './events.js';
export type { CardProcessorClient, CardSubscription, CardRefund } from './providers/card-processor.js';
export type { WalletProviderClient, WalletSubscription, WalletRefund } from './providers/wallet-provider.js';
