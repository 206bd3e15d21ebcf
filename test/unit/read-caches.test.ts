import { describe, expect, it } from 'vitest';
import { ReadCaches } from '../../src/cache/read-caches.js';

const T0 = 1_800_000_000_000;
const db = {};

/** Fills a cache with `keys` (each read once), so that what a notification forgets can be seen in `size`. */
async function fill<K>(cache: { get(key: K, nowMs: number, read: () => Promise<unknown>): Promise<unknown> }, ...keys: K[]) {
  for (const key of keys) await cache.get(key, T0, async () => ({ key }));
}

describe('ReadCaches', () => {
  it('forgets a cache declared on a table at any write to that table, and only then', async () => {
    const caches = new ReadCaches({ through: db });
    const joined = caches.declare<string, unknown>('joined', { dependsOn: ['a_table', 'b_table'], maxEntries: 10 });
    caches.setLive(true);
    await fill(joined, 'x', 'y');
    caches.notified('c_table:1');
    expect(joined.size).toBe(2);
    caches.notified('b_table:7');
    expect(joined.size).toBe(0);
    await fill(joined, 'x');
    caches.wrote(new Set(['a_table']));
    expect(joined.size).toBe(0);
  });

  it("forgets one row of a table's row cache on its notification, every row on a truncate or a local write", async () => {
    const caches = new ReadCaches({ through: db });
    const rows = caches.declareRows<unknown>('rows', { table: 'a_table', maxEntries: 10 });
    caches.setLive(true);
    await fill(rows, 1, 2, 3);
    caches.notified('a_table:2');
    expect(rows.size).toBe(2);
    caches.notified('a_table');
    expect(rows.size).toBe(0);
    await fill(rows, 1, 2);
    caches.wrote(new Set(['a_table']));
    expect(rows.size).toBe(0);
    await fill(rows, 1);
    caches.wrote(null);
    expect(rows.size).toBe(0);
  });

  it('serves reads through the handle it was made for only: never a transaction, never in a process without one', () => {
    const caches = new ReadCaches({ through: db });
    const cache = caches.declare<string, unknown>('c', { dependsOn: [], maxEntries: 1 });
    expect(cache.through(db)).toBe(cache);
    expect(cache.through({})).toBeUndefined();
    const cli = new ReadCaches();
    expect(cli.declare<string, unknown>('c', { dependsOn: [], maxEntries: 1 }).through(db)).toBeUndefined();
  });

  it("reloads on its table's notification and when the feed is back live; settling waits for every reload under way", async () => {
    const caches = new ReadCaches({ through: db });
    const loads: string[] = [];
    const waiting: Array<() => void> = [];
    const load = (name: string) => () => new Promise<void>((resolve) => (loads.push(name), waiting.push(resolve)));
    caches.reloadOn('s_table', load('s'));
    caches.reloadOn('p_table', load('p'));
    expect(caches.settling()).toBeUndefined();
    caches.notified('s_table:1');
    expect(loads).toEqual(['s']);
    expect(caches.settling()).toBeDefined();
    caches.setLive(true);
    expect(caches.live).toBe(true);
    expect(loads).toEqual(['s', 'p']);
    let settled = false;
    void Promise.resolve(caches.settling()).then(() => (settled = true));
    // The settings reload was asked again while under way: it runs once more before settling.
    while (waiting.length > 0) {
      waiting.shift()!();
      await new Promise((r) => setImmediate(r));
    }
    expect(loads).toEqual(['s', 'p', 's']);
    expect(settled).toBe(true);
    expect(caches.settling()).toBeUndefined();
  });

  it('refuses a name declared twice', () => {
    const caches = new ReadCaches();
    caches.declare('c', { dependsOn: [], maxEntries: 1 });
    expect(() => caches.declareRows('c', { table: 't', maxEntries: 1 })).toThrow(/declared twice/);
  });
});
