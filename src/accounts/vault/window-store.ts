import { Redis } from 'ioredis';
import type { Kysely } from 'kysely';
import type { DB } from '../../db/types.js';
import type { Clock } from '../../lib/clock.js';

/**
 * Where open vault windows live: shared by every node (Redis when REDIS_URL is set, else the database).
 * Values are opaque sealed strings; expiry is the window's latest possible end, a backstop for the checks
 * made on every read.
 */
export interface VaultWindowStore {
  /** `db` is the caller's connection (an action's transaction): the database store must not take another. */
  get(key: string, db: Kysely<DB>): Promise<string | null>;
  put(key: string, value: string, expiresAtMs: number, db: Kysely<DB>): Promise<void>;
  /**
   * Replaces a window that is still stored (unexpired), never creating one: false when it is gone. A
   * heartbeat or a decrypt that read the window just before a concurrent lock must not bring it back.
   */
  replace(key: string, value: string, expiresAtMs: number, db: Kysely<DB>): Promise<boolean>;
  delete(key: string, db: Kysely<DB>): Promise<void>;
  close(): Promise<void>;
}

export class DatabaseVaultWindowStore implements VaultWindowStore {
  constructor(private readonly clock: Clock) {}

  async get(key: string, db: Kysely<DB>): Promise<string | null> {
    const row = await db
      .selectFrom('uvw_vault_windows')
      .select('uvw_value')
      .where('uvw_key', '=', key)
      .where('uvw_expires_time', '>', this.clock.now())
      .executeTakeFirst();
    return row?.uvw_value ?? null;
  }

  async put(key: string, value: string, expiresAtMs: number, db: Kysely<DB>): Promise<void> {
    const values = { uvw_value: value, uvw_expires_time: new Date(expiresAtMs) };
    await db
      .insertInto('uvw_vault_windows')
      .values({ uvw_key: key, ...values })
      .onConflict((oc) => oc.column('uvw_key').doUpdateSet(values))
      .execute();
    // Expired windows of other sessions go with the next write; they open nothing without their token anyway.
    await db.deleteFrom('uvw_vault_windows').where('uvw_expires_time', '<=', this.clock.now()).execute();
  }

  async replace(key: string, value: string, expiresAtMs: number, db: Kysely<DB>): Promise<boolean> {
    const updated = await db
      .updateTable('uvw_vault_windows')
      .set({ uvw_value: value, uvw_expires_time: new Date(expiresAtMs) })
      .where('uvw_key', '=', key)
      .where('uvw_expires_time', '>', this.clock.now())
      .executeTakeFirst();
    return Number(updated.numUpdatedRows) === 1;
  }

  async delete(key: string, db: Kysely<DB>): Promise<void> {
    await db.deleteFrom('uvw_vault_windows').where('uvw_key', '=', key).execute();
  }

  async close(): Promise<void> {}
}

export class RedisVaultWindowStore implements VaultWindowStore {
  private readonly redis: Redis;

  constructor(
    url: string,
    private readonly clock: Clock,
    readonly prefix = 'gatehouse:vault-window:',
  ) {
    this.redis = new Redis(url, { lazyConnect: false, maxRetriesPerRequest: 2 });
  }

  async get(key: string): Promise<string | null> {
    return this.redis.get(this.prefix + key);
  }

  async put(key: string, value: string, expiresAtMs: number): Promise<void> {
    const ttl = Math.max(1, expiresAtMs - this.clock.nowMs());
    await this.redis.set(this.prefix + key, value, 'PX', ttl);
  }

  async replace(key: string, value: string, expiresAtMs: number): Promise<boolean> {
    const ttl = Math.max(1, expiresAtMs - this.clock.nowMs());
    // XX: only while the key exists (Redis has already dropped an expired one).
    return (await this.redis.set(this.prefix + key, value, 'PX', ttl, 'XX')) === 'OK';
  }

  async delete(key: string): Promise<void> {
    await this.redis.del(this.prefix + key);
  }

  async close(): Promise<void> {
    this.redis.disconnect();
  }
}
