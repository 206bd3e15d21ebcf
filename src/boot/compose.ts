import { systemClock } from '../lib/clock.js';
import { RateLimitBucket, settingsLimits } from '../http/rate-limit/bucket.js';
import { MemoryRateLimitStore } from '../http/rate-limit/memory-store.js';
import { RedisRateLimitStore } from '../http/rate-limit/redis-store.js';
import { RequestLog } from '../http/request-log.js';
import { Plugins, PLUGINS_TABLE } from '../settings/plugins.js';
import { Settings, SETTINGS_TABLE } from '../settings/store.js';
import { Scheduler } from '../tasks/scheduler.js';
import { allTasks } from './tasks.js';
import { activeOnly, pluginModules } from './plugins.js';
import { pluginTasks } from '../plugin-kit/tasks.js';
import { TierSystem } from '../tiers/index.js';
import { WebSessions } from '../accounts/web-sessions.js';
import { StoreSystem } from '../store/index.js';
import { ReadCaches } from '../cache/read-caches.js';
import { declareKeyRowCache } from '../accounts/auth/key-row-cache.js';
import { VerificationCache } from '../accounts/auth/verification-cache.js';
import { declareUserTierCache } from '../tiers/features.js';
import { ModelReadCaches } from '../models/read-caches.js';
import { ROW_CHANGES } from '../db/change-feed.js';
import { VaultWindows } from '../accounts/vault/window.js';
import type { VaultParts } from '../accounts/vault/parts.js';
import { unlockerFloorVeto, vaultPasswordVeto } from '../accounts/vault/unlockers.js';
import type { PasskeyVetoes } from '../accounts/passkeys/vetoes.js';
import { openDriveStorage } from '../drive/storage.js';
import { resealDriveContent } from '../drive/sealed-files.js';
import { DatabaseVaultWindowStore, RedisVaultWindowStore, type VaultWindowStore } from '../accounts/vault/window-store.js';
import { MemberEmailSender } from '../outbound/emails/sender.js';
import type { Config } from '../config.js';
import type { Database } from '../db/database.js';
import type { Clock } from '../lib/clock.js';
import type { RateLimitStore } from '../http/rate-limit/store.js';
import type { RateLimitBuckets, Services } from '../services.js';

export interface ServiceOptions {
  config: Config;
  database: Database;
  clock?: Clock;
  /** Overrides the store chosen from REDIS_URL (tests pass one with their own key prefix). */
  rateLimitStore?: RateLimitStore;
  /**
   * A safety reload of the settings and plugin flags, for a change whose notification could have been
   * missed: every 30 s while the change feed is live, every second while it is not (off in tests).
   */
  refreshSettings?: boolean;
  /** Where plugin folders are discovered (tests point at fixtures). */
  pluginsDir?: string;
  /** Serve reads from memory, kept right by the change feed (default true; the CLI, which serves no requests, turns it off). */
  readCaches?: boolean;
  /** Overrides the vault window store chosen from REDIS_URL (tests pass one with their own key prefix). */
  vaultWindowStore?: VaultWindowStore;
}

const SAFETY_RELOAD_SECONDS = 30;

export async function createServices(opts: ServiceOptions): Promise<Services> {
  const clock = opts.clock ?? systemClock;
  // First: a plugin's settings, models and actions join the registries before anything reads them.
  const plugged = await pluginModules();
  const db = opts.database.db;
  // The read caches serve reads through `db` (never a transaction), kept right by the change feed; the
  // CLI, without a feed, has none to serve from.
  const changes = opts.readCaches === false ? undefined : opts.database.changes;
  const caches = new ReadCaches(changes ? { through: db } : {});
  const keyRows = declareKeyRowCache(caches);
  const userTiers = declareUserTierCache(caches);
  const modelCaches = new ModelReadCaches(caches, userTiers);
  // Invalid tier feature definitions stop the start here, with a message naming the file and key.
  const tiers = TierSystem.load(db, clock, opts.pluginsDir ? { pluginsDir: opts.pluginsDir } : {}, userTiers);
  const settings = new Settings(db, clock);
  const plugins = new Plugins(db, clock, opts.pluginsDir);
  await Promise.all([settings.load(), plugins.load()]);
  const settingsReload = caches.reloadOn(SETTINGS_TABLE, () => settings.load());
  const pluginsReload = caches.reloadOn(PLUGINS_TABLE, () => plugins.load());
  // Other nodes (and the CLI writing through the socket) change settings and plugin flags: their
  // notifications reload them at once; this is the safety net for one that was missed.
  let sinceReload = 0;
  const refresh = opts.refreshSettings
    ? setInterval(() => {
        if (caches.live && ++sinceReload < SAFETY_RELOAD_SECONDS) return;
        sinceReload = 0;
        settingsReload.request();
        pluginsReload.request();
      }, 1000)
    : undefined;
  refresh?.unref();
  const rateLimitStore =
    opts.rateLimitStore ?? (opts.config.redisUrl ? new RedisRateLimitStore(opts.config.redisUrl) : new MemoryRateLimitStore());
  const buckets: RateLimitBuckets = {
    general: new RateLimitBucket('general', rateLimitStore, clock, settingsLimits(settings, 'api_rate_limit_requests', 'api_rate_limit_window')),
    failedAuth: new RateLimitBucket('auth', rateLimitStore, clock, settingsLimits(settings, 'api_auth_rate_limit_requests', 'api_auth_rate_limit_window')),
    browserSession: new RateLimitBucket('browser', rateLimitStore, clock, settingsLimits(settings, 'api_session_rate_limit_requests', 'api_session_rate_limit_window')),
    deviceLink: new RateLimitBucket('device_link', rateLimitStore, clock, settingsLimits(settings, 'api_device_link_rate_limit_requests', 'api_device_link_rate_limit_window')),
  };
  const webSessions = new WebSessions(db, clock, settings);
  const requestLog = new RequestLog((table, columns, text) => opts.database.copyRows(table, columns, text));
  const partial = { config: opts.config, database: opts.database, db, clock, settings, plugins, webSessions, rateLimitStore, buckets, requestLog };
  const store = new StoreSystem(db, settings, clock);
  const driveStorage = openDriveStorage(opts.config);
  const scheduler = new Scheduler(db, clock, [...allTasks({ ...partial, store, driveStorage }), ...pluginTasks(plugged, { ...partial, tiers })]);
  // What other rooms contribute to the vault, in the order they run: sealed Drive files follow their
  // owner's vault through a rotation (DESIGN 10), then each plugin's content; a plugin's protection
  // levels count only while it is active.
  const vaultParts: VaultParts = {
    resealers: [resealDriveContent, ...plugged.flatMap((p) => (p.contentResealer ? [p.contentResealer] : []))],
    levelSources: plugged.flatMap((p) => (p.protectionLevels ? [activeOnly(partial, p.name, p.protectionLevels)] : [])),
  };
  // The vault's vetoes on passkeys: the unlocker floor on revocation, the password on sign-in.
  const passkeyVetoes: PasskeyVetoes = { revoke: [unlockerFloorVeto], signIn: [vaultPasswordVeto] };
  const forgetOnWrite = changes?.onLocalWrite((tables) => caches.wrote(tables));
  const feed = changes?.feed(ROW_CHANGES, { changed: (payload) => caches.notified(payload), live: (isLive) => caches.setLive(isLive) });
  feed?.start();
  const vaultWindowStore =
    opts.vaultWindowStore ?? (opts.config.redisUrl ? new RedisVaultWindowStore(opts.config.redisUrl, clock) : new DatabaseVaultWindowStore(clock));
  const memberEmails = new MemberEmailSender({ db, clock, settings, baseUrl: opts.config.baseUrl });
  return {
    ...partial,
    memberEmails,
    memberLinks: plugged.flatMap((p) => (p.memberLinks ?? []).map((l) => ({ plugin: p.name, label: l.label, path: l.path }))),
    scheduler,
    tiers,
    store,
    keyRows,
    keyVerifications: new VerificationCache(),
    modelCaches,
    caches,
    vaultWindows: new VaultWindows(vaultWindowStore, clock, vaultParts.levelSources),
    vaultParts,
    passkeyVetoes,
    driveStorage,
    async close() {
      if (refresh) clearInterval(refresh);
      forgetOnWrite?.();
      await feed?.stop();
      await scheduler.stop();
      await memberEmails.stop();
      await requestLog.stop();
      await rateLimitStore.close();
      await vaultWindowStore.close();
    },
  };
}
