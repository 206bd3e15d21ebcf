import type { Kysely } from 'kysely';
import type { Config } from './config.js';
import type { Database } from './db/database.js';
import type { DB } from './db/types.js';
import type { Clock } from './lib/clock.js';
import type { RateLimitBucket } from './http/rate-limit/bucket.js';
import type { RateLimitStore } from './http/rate-limit/store.js';
import type { RequestLog } from './http/request-log.js';
import type { Plugins } from './settings/plugins.js';
import type { Settings } from './settings/store.js';
import type { Scheduler } from './tasks/scheduler.js';
import type { TierSystem } from './tiers/index.js';
import type { WebSessions } from './accounts/web-sessions.js';
import type { StoreSystem } from './store/index.js';
import type { ReadCaches } from './cache/read-caches.js';
import type { KeyRowCache } from './accounts/auth/key-row-cache.js';
import type { ModelCaches } from './models/define.js';
import type { VaultWindows } from './accounts/vault/window.js';
import type { VerificationCache } from './accounts/auth/verification-cache.js';
import type { VaultParts } from './accounts/vault/parts.js';
import type { PasskeyVetoes } from './accounts/passkeys/vetoes.js';
import type { DriveStorage } from './drive/storage.js';
import type { MemberEmailSender } from './outbound/emails/sender.js';
import type { PluginMemberLink } from './web/viewer.js';

// The doors' bag: what a request handler or a command may reach. It is composed once per process (or per
// test app) by src/boot/compose.ts. Code below the doors never takes it: a function there declares the
// few things it reads, and this bag satisfies that interface structurally.

export interface RateLimitBuckets {
  /** Every API request, per IP, before authentication. */
  general: RateLimitBucket;
  /** Failed authentication attempts, per IP. */
  failedAuth: RateLimitBucket;
  /** Signed-in browser-session requests, per user, after authentication. */
  browserSession: RateLimitBucket;
  /** Device-link start and poll, per IP. */
  deviceLink: RateLimitBucket;
}

/** Everything a request or a command needs, built once per process (or per test app). */
export interface Services {
  config: Config;
  database: Database;
  db: Kysely<DB>;
  clock: Clock;
  settings: Settings;
  plugins: Plugins;
  webSessions: WebSessions;
  rateLimitStore: RateLimitStore;
  buckets: RateLimitBuckets;
  requestLog: RequestLog;
  scheduler: Scheduler;
  /** Tiers: feature registry, membership services, feature reads. */
  tiers: TierSystem;
  /** The store: active only with products_active and subscriptions_active and a configured billing source; provider clients and fakes' seams. */
  store: StoreSystem;
  /** Key rows of recently presented keys (declared in caches). */
  keyRows: KeyRowCache;
  /** The model reads' caches (declared in caches): the tier catalogue, users' tiers, public-read rows and listings. */
  modelCaches: ModelCaches;
  /** Machine-key secrets verified recently, so a key's slow hash is paid once (per process). */
  keyVerifications: VerificationCache;
  /** Rows served from memory while nothing changed them, and what keeps them right (see ReadCaches). */
  caches: ReadCaches;
  /** Open sealed-vault windows, in the shared store (Redis when REDIS_URL is set, else the database). */
  vaultWindows: VaultWindows;
  /** What other rooms contribute to the vault (rotation re-sealers, protection level sources), composed at start. */
  vaultParts: VaultParts;
  /** Consumers' vetoes on passkeys (the vault's unlocker floor and password), composed at start. */
  passkeyVetoes: PasskeyVetoes;
  /** Where Drive keeps bytes, opened once at start. */
  driveStorage: DriveStorage;
  /** Sends queued member emails (DESIGN 15); its worker runs in the server process of every node. */
  memberEmails: MemberEmailSender;
  /** Links the loaded plugins put in members' top bar (PluginModule.memberLinks), each shown while its plugin is active. */
  memberLinks: readonly PluginMemberLink[];
  close(): Promise<void>;
}
