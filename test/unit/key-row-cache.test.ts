import { describe, expect, it } from 'vitest';
import { KeyRowCache } from '../../src/http/auth/key-row-cache.js';

const T0 = 1_800_000_000_000;

function counter(row: { id: number } | null = { id: 1 }) {
  const reader = { reads: 0, read: async () => (reader.reads++, row ?? undefined) };
  return reader;
}

describe('KeyRowCache', () => {
  it('reads every time while the change feed is not live', async () => {
    const cache = new KeyRowCache<{ id: number }>();
    const c = counter();
    await cache.get('k', T0, c.read);
    await cache.get('k', T0, c.read);
    expect(c.reads).toBe(2);
    expect(cache.size).toBe(0);
  });

  it('keeps a row read while live and serves it until invalidated', async () => {
    const cache = new KeyRowCache<{ id: number }>();
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
    const cache = new KeyRowCache<{ id: number }>();
    cache.setLive(true);
    const c = counter(null);
    expect(await cache.get('nope', T0, c.read)).toBeUndefined();
    await cache.get('nope', T0, c.read);
    expect(c.reads).toBe(2);
  });

  it('does not keep a read that was under way when the cache was invalidated', async () => {
    const cache = new KeyRowCache<{ id: number }>();
    cache.setLive(true);
    let finish!: (row: { id: number }) => void;
    const pending = cache.get('k', T0, () => new Promise((resolve) => (finish = resolve)));
    cache.invalidate(); // a write lands while the old row is on its way
    finish({ id: 1 });
    expect(await pending).toEqual({ id: 1 });
    expect(cache.size).toBe(0);
  });

  it('does not keep a read that finished after the feed went down, and starts empty when it is back', async () => {
    const cache = new KeyRowCache<{ id: number }>();
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
    const cache = new KeyRowCache<{ id: number }>({ ttlMs: 1000 });
    cache.setLive(true);
    const c = counter();
    await cache.get('k', T0, c.read);
    await cache.get('k', T0 + 999, c.read);
    expect(c.reads).toBe(1);
    await cache.get('k', T0 + 1000, c.read);
    expect(c.reads).toBe(2);
  });

  it('holds at most maxEntries, dropping the oldest', async () => {
    const cache = new KeyRowCache<{ id: number }>({ maxEntries: 2 });
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
});
