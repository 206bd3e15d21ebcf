import type { ReadCache } from '../../cache/read-cache.js';
import type { ReadCaches } from '../../cache/read-caches.js';
import type { KeyRow } from './authenticate.js';

/** What a key row is read from (the key lookup's tables): a write to any of them forgets every key row. */
const KEY_ROW_TABLES = ['apk_api_keys', 'usr_users', 'grm_group_members', 'sbt_subscription_tiers'];

/** Key rows of recently presented keys, by public key. */
export type KeyRowCache = ReadCache<string, KeyRow>;

export function declareKeyRowCache(caches: ReadCaches): KeyRowCache {
  return caches.declare('keyRows', { dependsOn: KEY_ROW_TABLES, maxEntries: 10_000 });
}
