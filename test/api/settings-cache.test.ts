import type { Kysely } from 'kysely';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { loadConfig } from '../../src/config.js';
import type { Database } from '../../src/db/database.js';
import type { DB } from '../../src/db/types.js';
import { MemoryRateLimitStore } from '../../src/http/rate-limit/memory-store.js';
import { Plugins } from '../../src/settings/plugins.js';
import { Settings } from '../../src/settings/store.js';
import { TestClock } from '../../src/lib/clock.js';
import { createServices } from '../../src/boot/compose.js';
import type { Services } from '../../src/services.js';
import { openTestDatabase } from '../helpers/database.js';

/**
 * Two nodes on one database: each keeps its own settings cache. A write updates the writing node at once;
 * every other node reloads on the write's notification (the server's refreshSettings is only a slow
 * safety reload).
 */
describe('settings and plugin flags cached per node', () => {
  let database: Database | undefined;
  const nodes: Services[] = [];
  afterEach(async () => {
    vi.useRealTimers();
    for (const node of nodes.splice(0)) await node.close();
    await database?.close();
  });

  async function node(refreshSettings: boolean): Promise<Services> {
    const services = await createServices({
      config: { ...loadConfig({}), databaseUrl: process.env.DATABASE_URL },
      database: database!,
      clock: new TestClock('2026-03-01T12:00:00Z'),
      rateLimitStore: new MemoryRateLimitStore(),
      refreshSettings,
    });
    nodes.push(services);
    return services;
  }

  it("another node sees a write as soon as its notification arrives, with no refresh, and its next request waits for the reload", async () => {
    database = await openTestDatabase();
    // No timer runs: whatever the reader learns, it learns from the write's notification.
    vi.useFakeTimers({ toFake: ['setInterval', 'clearInterval'] });
    const writer = await node(false);
    const reader = await node(true);
    await expect.poll(() => reader.caches.live, { timeout: 5000 }).toBe(true);
    const notified: string[] = [];
    const notify = reader.caches.notified.bind(reader.caches);
    reader.caches.notified = (payload) => {
      notified.push(payload);
      notify(payload);
    };
    expect(reader.settings.bool('api_require_https')).toBe(true);
    expect(reader.plugins.isActive('bookings')).toBe(false);

    await writer.settings.set('api_require_https', false);
    await writer.plugins.setActive('bookings', true);
    expect(writer.settings.bool('api_require_https')).toBe(false);
    expect(writer.plugins.isActive('bookings')).toBe(true);

    // Each notification asks for a reload; a request waits for it (settling) before it reads a setting.
    // (On the embedded database they arrived while the writes completed; on PostgreSQL a moment later.)
    const arrived = (table: string) => notified.some((p) => p.startsWith(`${table}:`));
    await expect.poll(() => arrived('stg_settings') && arrived('plg_plugins'), { timeout: 5000 }).toBe(true);
    await reader.caches.settling();
    expect(reader.settings.bool('api_require_https')).toBe(false);
    expect(reader.plugins.isActive('bookings')).toBe(true);
  });
});

/**
 * The database seen through a reload whose answer arrives late: selectFrom(...).select(...).execute() reads
 * the table at once but hands the rows over only after release(); everything else goes straight through.
 * (Not a Kysely plugin: a plugin's transformResult runs while the connection is held, and the embedded
 * database has one connection, so the write under test could never run.)
 */
function lateReads(db: Kysely<DB>): { db: Kysely<DB>; release(): void } {
  let release!: () => void;
  const gate = new Promise<void>((r) => (release = r));
  const late = new Proxy(db, {
    get(target, prop) {
      if (prop === 'selectFrom') {
        return (table: never) => ({
          select: (columns: never) => ({
            execute: async () => {
              const rows = await target.selectFrom(table).select(columns).execute();
              await gate;
              return rows;
            },
          }),
        });
      }
      const value = Reflect.get(target, prop) as unknown;
      return typeof value === 'function' ? value.bind(target) : value;
    },
  });
  return { db: late, release };
}

describe("a node's own write and a reload in flight", () => {
  let database: Database | undefined;
  afterEach(async () => database?.close());

  it('a reload that read the settings before this node wrote does not undo the write', async () => {
    database = await openTestDatabase();
    const slow = lateReads(database.db);
    const settings = new Settings(slow.db, new TestClock());
    const reloading = settings.load();
    await settings.set('api_require_https', false);
    slow.release();
    await reloading;
    expect(settings.bool('api_require_https')).toBe(false);
    // The next reload reads the stored value.
    await settings.load();
    expect(settings.bool('api_require_https')).toBe(false);
  });

  it('a plugin flag reload that read before this node wrote does not undo the write', async () => {
    database = await openTestDatabase();
    const slow = lateReads(database.db);
    const plugins = new Plugins(slow.db, new TestClock());
    const reloading = plugins.load();
    await plugins.setActive('bookings', true);
    slow.release();
    await reloading;
    expect(plugins.isActive('bookings')).toBe(true);
    await plugins.load();
    expect(plugins.isActive('bookings')).toBe(true);
  });
});
