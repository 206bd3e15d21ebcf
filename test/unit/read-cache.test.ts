import { describe, expect, it } from 'vitest';
import { ReadCache } from '../../src/cache/read-cache.js';

const T0 = 1_800_000_000_000;

function counter(row: { id: number } | null = { id: 1 }) {
  const reader = { reads: 0, read: async () => (reader.reads++, row ?? undefined) };
  return reader;
}

describe('ReadCache', () => {
  it('reads every time while the change feed is not live', async () => {
    const cache = new ReadCache<string, { id: number }>();
    const c = counter();
    await cache.get('k', T0, c.read);
    await cache.get('k', T0, c.read);
    expect(c.reads).toBe(2);
    expect(cache.size).toBe(0);
  });

  it('keeps a row read while live and serves it until invalidated', async () => {
    const cache = new ReadCache<string, { id: number }>();
    cache.setLive(true);
    const c = counter();
    expect(await cache.get('k', T0, c.read)).toEqual({ id: 1 });
    expect(await cache.get('k', T0 + 1, c.read)).toEqual({ id: 1 });
    expect(c.reads).toBe(1);
    cache.invalidate();
    expect(cache.size).toBe(0);
    await cache.get('k', T0 + 2, c.read);
    expect(c.reads).toBe(2);
  });

  it('never keeps an unknown key', async () => {
    const cache = new ReadCache<string, { id: number }>();
    cache.setLive(true);
    const c = counter(null);
    expect(await cache.get('nope', T0, c.read)).toBeUndefined();
    await cache.get('nope', T0, c.read);
    expect(c.reads).toBe(2);
  });

  it('does not keep a read that was under way when the cache was invalidated', async () => {
    const cache = new ReadCache<string, { id: number }>();
    cache.setLive(true);
    let finish!: (row: { id: number }) => void;
    const pending = cache.get('k', T0, () => new Promise((resolve) => (finish = resolve)));
    cache.invalidate(); // a write lands while the old row is on its way
    finish({ id: 1 });
    expect(await pending).toEqual({ id: 1 });
    expect(cache.size).toBe(0);
  });

  it('does not keep a read that finished after the feed went down, and starts empty when it is back', async () => {
    const cache = new ReadCache<string, { id: number }>();
    cache.setLive(true);
    await cache.get('a', T0, counter().read);
    let finish!: (row: { id: number }) => void;
    const pending = cache.get('b', T0, () => new Promise((resolve) => (finish = resolve)));
    cache.setLive(false);
    finish({ id: 2 });
    await pending;
    expect(cache.size).toBe(0);
    cache.setLive(true);
    const c = counter();
    await cache.get('a', T0, c.read);
    expect(c.reads).toBe(1);
  });

  it('reads again once an entry is ttlMs old', async () => {
    const cache = new ReadCache<string, { id: number }>({ ttlMs: 1000 });
    cache.setLive(true);
    const c = counter();
    await cache.get('k', T0, c.read);
    await cache.get('k', T0 + 999, c.read);
    expect(c.reads).toBe(1);
    await cache.get('k', T0 + 1000, c.read);
    expect(c.reads).toBe(2);
  });

  it('holds at most maxEntries, dropping the oldest', async () => {
    const cache = new ReadCache<string, { id: number }>({ maxEntries: 2 });
    cache.setLive(true);
    const c = counter();
    for (const key of ['a', 'b', 'c']) await cache.get(key, T0, c.read);
    expect(cache.size).toBe(2);
    await cache.get('b', T0, c.read);
    await cache.get('c', T0, c.read);
    expect(c.reads).toBe(3);
    await cache.get('a', T0, c.read);
    expect(c.reads).toBe(4);
  });

  it('drops the least recently used entry, not the oldest read, once maxEntries are held', async () => {
    const cache = new ReadCache<string, { id: number }>({ maxEntries: 3 });
    cache.setLive(true);
    const c = counter();
    for (const key of ['a', 'b', 'c']) await cache.get(key, T0, c.read);
    await cache.get('a', T0, c.read); // a is now the most recently used
    await cache.get('d', T0, c.read); // b goes
    expect(cache.size).toBe(3);
    expect(c.reads).toBe(4);
    for (const key of ['a', 'c', 'd']) await cache.get(key, T0, c.read);
    expect(c.reads).toBe(4);
    await cache.get('b', T0, c.read);
    expect(c.reads).toBe(5);
  });

  it('never holds more than maxEntries however many keys are read', async () => {
    const cache = new ReadCache<number, { id: number }>({ maxEntries: 100 });
    cache.setLive(true);
    for (let i = 0; i < 1000; i++) await cache.get(i, T0, async () => ({ id: i }));
    expect(cache.size).toBe(100);
    expect(await cache.get(999, T0, async () => ({ id: -1 }))).toEqual({ id: 999 });
    expect(await cache.get(0, T0, async () => ({ id: -1 }))).toEqual({ id: -1 });
  });

  it('forgets one key and leaves the others', async () => {
    const cache = new ReadCache<string, { id: number }>();
    cache.setLive(true);
    const c = counter();
    await cache.get('a', T0, c.read);
    await cache.get('b', T0, c.read);
    cache.forget('a');
    expect(cache.size).toBe(1);
    await cache.get('b', T0, c.read);
    expect(c.reads).toBe(2);
    await cache.get('a', T0, c.read);
    expect(c.reads).toBe(3);
  });

  it('shares one read among concurrent misses of a key, but not across a forget', async () => {
    const cache = new ReadCache<string, { id: number }>();
    cache.setLive(true);
    let reads = 0;
    const finishers: Array<(row: { id: number }) => void> = [];
    const read = () => (reads++, new Promise<{ id: number }>((resolve) => finishers.push(resolve)));
    const first = cache.get('k', T0, read);
    const second = cache.get('k', T0, read);
    expect(reads).toBe(1);
    cache.forget('k');
    const third = cache.get('k', T0, read);
    expect(reads).toBe(2);
    finishers[0]!({ id: 1 });
    finishers[1]!({ id: 2 });
    expect(await first).toEqual({ id: 1 });
    expect(await second).toEqual({ id: 1 });
    expect(await third).toEqual({ id: 2 });
    expect(cache.size).toBe(1);
    expect(await cache.get('k', T0, read)).toEqual({ id: 2 });
  });
});
