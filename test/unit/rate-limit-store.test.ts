import { Socket } from 'node:net';
import { Redis } from 'ioredis';
import { afterEach, describe, expect, it } from 'vitest';
import { MemoryRateLimitStore } from '../../src/http/rate-limit/memory-store.js';
import { RedisRateLimitStore } from '../../src/http/rate-limit/redis-store.js';
import type { RateLimitStore } from '../../src/http/rate-limit/store.js';
import { randomHex } from '../../src/lib/crypto.js';

const LOCAL_REDIS = 'redis://127.0.0.1:6379';

/** REDIS_URL when set; otherwise the machine's Redis when it answers PING; otherwise none. */
async function reachableRedis(): Promise<string | undefined> {
  if (process.env.REDIS_URL) return process.env.REDIS_URL;
  return new Promise((resolve) => {
    const socket = new Socket();
    const done = (url: string | undefined) => {
      socket.destroy();
      resolve(url);
    };
    socket.setTimeout(500, () => done(undefined));
    socket.once('error', () => done(undefined));
    socket.once('data', (d) => done(d.toString().startsWith('+PONG') ? LOCAL_REDIS : undefined));
    socket.connect(6379, '127.0.0.1', () => socket.write('PING\r\n'));
  });
}

const redisUrl = await reachableRedis();

interface StoreUnderTest {
  store: RateLimitStore;
  cleanup(): Promise<void>;
}

const T0 = Date.parse('2026-03-01T12:00:00Z');
const WINDOW = 60_000;

function storeBehaviours(name: string, open: () => StoreUnderTest) {
  describe(`${name}: the sliding-log contract`, () => {
    let current: StoreUnderTest | undefined;
    const store = () => {
      current = open();
      return current.store;
    };
    afterEach(async () => {
      await current?.cleanup();
      current = undefined;
    });

    it('admits hits up to the limit and refuses the next, reporting count and oldest hit', async () => {
      const s = store();
      for (let i = 1; i <= 3; i++) {
        expect(await s.consume('k', T0 + i * 1000, WINDOW, 3)).toEqual({ allowed: true, count: i, oldestMs: T0 + 1000 });
      }
      expect(await s.consume('k', T0 + 4000, WINDOW, 3)).toEqual({ allowed: false, count: 3, oldestMs: T0 + 1000 });
    });

    it('does not record a refused hit', async () => {
      const s = store();
      await s.consume('k', T0, WINDOW, 2);
      await s.consume('k', T0 + 10_000, WINDOW, 2);
      for (let i = 0; i < 5; i++) expect((await s.consume('k', T0 + 20_000 + i, WINDOW, 2)).allowed).toBe(false);
      // Only the oldest counted hit has left: had the refusals been recorded, the window would still be full.
      expect(await s.consume('k', T0 + WINDOW, WINDOW, 2)).toEqual({ allowed: true, count: 2, oldestMs: T0 + 10_000 });
    });

    it('counts a hit at t until t + window exactly, when it leaves', async () => {
      const s = store();
      await s.consume('k', T0, WINDOW, 1);
      expect(await s.peek('k', T0 + WINDOW - 1, WINDOW, 1)).toEqual({ allowed: false, count: 1, oldestMs: T0 });
      expect(await s.peek('k', T0 + WINDOW, WINDOW, 1)).toEqual({ allowed: true, count: 0, oldestMs: null });
      expect(await s.consume('k', T0 + WINDOW, WINDOW, 1)).toEqual({ allowed: true, count: 1, oldestMs: T0 + WINDOW });
    });

    it('slides: each hit leaves on its own schedule', async () => {
      const s = store();
      await s.consume('k', T0, WINDOW, 3);
      await s.consume('k', T0 + 20_000, WINDOW, 3);
      await s.consume('k', T0 + 40_000, WINDOW, 3);
      expect(await s.peek('k', T0 + 60_000, WINDOW, 3)).toEqual({ allowed: true, count: 2, oldestMs: T0 + 20_000 });
      expect(await s.peek('k', T0 + 80_000, WINDOW, 3)).toEqual({ allowed: true, count: 1, oldestMs: T0 + 40_000 });
      expect(await s.peek('k', T0 + 100_000, WINDOW, 3)).toEqual({ allowed: true, count: 0, oldestMs: null });
    });

    it('peek reads the window without counting', async () => {
      const s = store();
      expect(await s.peek('k', T0, WINDOW, 1)).toEqual({ allowed: true, count: 0, oldestMs: null });
      expect(await s.peek('k', T0, WINDOW, 1)).toEqual({ allowed: true, count: 0, oldestMs: null });
      expect(await s.consume('k', T0 + 1, WINDOW, 1)).toEqual({ allowed: true, count: 1, oldestMs: T0 + 1 });
      expect(await s.peek('k', T0 + 2, WINDOW, 1)).toEqual({ allowed: false, count: 1, oldestMs: T0 + 1 });
    });

    it('record counts unconditionally, even past the limit', async () => {
      const s = store();
      for (let i = 0; i < 4; i++) await s.record('k', T0 + i, WINDOW);
      expect(await s.peek('k', T0 + 10, WINDOW, 2)).toEqual({ allowed: false, count: 4, oldestMs: T0 });
      expect(await s.peek('k', T0 + WINDOW + 1, WINDOW, 3)).toEqual({ allowed: true, count: 2, oldestMs: T0 + 2 });
    });

    it('keeps every key independent', async () => {
      const s = store();
      expect((await s.consume('a', T0, WINDOW, 1)).allowed).toBe(true);
      expect((await s.consume('a', T0 + 1, WINDOW, 1)).allowed).toBe(false);
      expect(await s.consume('b', T0 + 1, WINDOW, 1)).toEqual({ allowed: true, count: 1, oldestMs: T0 + 1 });
      expect(await s.peek('c', T0 + 1, WINDOW, 1)).toEqual({ allowed: true, count: 0, oldestMs: null });
    });

    it('counts two hits in the same millisecond as two', async () => {
      const s = store();
      await s.consume('k', T0, WINDOW, 5);
      await s.record('k', T0, WINDOW);
      expect(await s.consume('k', T0, WINDOW, 5)).toEqual({ allowed: true, count: 3, oldestMs: T0 });
    });

    it('consumeAndPeek counts on the first key and only reads the second', async () => {
      const s = store();
      await s.record('auth', T0, WINDOW);
      await s.record('auth', T0 + 1, WINDOW);
      const general = { key: 'general', windowMs: WINDOW, limit: 2 };
      const auth = { key: 'auth', windowMs: WINDOW, limit: 2 };
      expect(await s.consumeAndPeek(general, { ...auth, limit: 3 }, T0 + 10)).toEqual([
        { allowed: true, count: 1, oldestMs: T0 + 10 },
        { allowed: true, count: 2, oldestMs: T0 },
      ]);
      expect(await s.consumeAndPeek(general, auth, T0 + 20)).toEqual([
        { allowed: true, count: 2, oldestMs: T0 + 10 },
        { allowed: false, count: 2, oldestMs: T0 },
      ]);
      // A refused hit is not recorded, and the peeked window slides like any other.
      expect(await s.consumeAndPeek(general, auth, T0 + WINDOW)).toEqual([
        { allowed: false, count: 2, oldestMs: T0 + 10 },
        { allowed: true, count: 1, oldestMs: T0 + 1 },
      ]);
      expect(await s.peek('auth', T0 + WINDOW, WINDOW, 2)).toEqual({ allowed: true, count: 1, oldestMs: T0 + 1 });
      expect(await s.peek('general', T0 + WINDOW, WINDOW, 2)).toEqual({ allowed: false, count: 2, oldestMs: T0 + 10 });
    });

    it('admits exactly the limit out of 50 parallel consumes', async () => {
      const s = store();
      const states = await Promise.all(Array.from({ length: 50 }, (_, i) => s.consume('k', T0 + i, WINDOW, 10)));
      expect(states.filter((st) => st.allowed)).toHaveLength(10);
      expect(states.filter((st) => !st.allowed)).toHaveLength(40);
      expect((await s.peek('k', T0 + 100, WINDOW, 10)).count).toBe(10);
    });
  });
}

storeBehaviours('MemoryRateLimitStore', () => {
  const store = new MemoryRateLimitStore();
  return { store, cleanup: () => store.close() };
});

describe.skipIf(!redisUrl)(`RedisRateLimitStore (${redisUrl ?? 'no Redis reachable'})`, () => {
  storeBehaviours('RedisRateLimitStore', () => {
    const prefix = `gatehouse:test:rl:${randomHex(6)}:`;
    const store = new RedisRateLimitStore(redisUrl!, prefix);
    return {
      store,
      async cleanup() {
        await store.close();
        const admin = new Redis(redisUrl!);
        try {
          const keys = await admin.keys(`${prefix}*`);
          if (keys.length > 0) await admin.del(...keys);
        } finally {
          await admin.quit();
        }
      },
    };
  });

  it('sets an expiry on each key so idle keys leave Redis on their own', async () => {
    const prefix = `gatehouse:test:rl:${randomHex(6)}:`;
    const store = new RedisRateLimitStore(redisUrl!, prefix);
    const admin = new Redis(redisUrl!);
    try {
      await store.consume('k', T0, WINDOW, 3);
      const ttl = await admin.pttl(`${prefix}k`);
      expect(ttl).toBeGreaterThan(0);
      expect(ttl).toBeLessThanOrEqual(WINDOW);
    } finally {
      await admin.del(`${prefix}k`);
      await admin.quit();
      await store.close();
    }
  });
});

describe('MemoryRateLimitStore stays bounded', () => {
  it('sweeps logs whose window has emptied', async () => {
    const store = new MemoryRateLimitStore();
    for (let i = 0; i < 500; i++) await store.consume(`ip-${i}`, T0, WINDOW, 10);
    expect(store.size).toBe(500);
    // The sweep runs every 1000 operations; by then every earlier window has emptied.
    for (let i = 0; i < 500; i++) await store.peek('live', T0 + WINDOW + i, WINDOW, 10);
    expect(store.size).toBe(1);
  });

  it('keeps logs that still hold counted hits when sweeping', async () => {
    const store = new MemoryRateLimitStore();
    await store.consume('recent', T0 + WINDOW, WINDOW, 10);
    for (let i = 0; i < 998; i++) await store.consume(`old-${i}`, T0, WINDOW, 10);
    // The 1000th operation sweeps.
    expect(await store.peek('recent', T0 + WINDOW + 1, WINDOW, 10)).toEqual({ allowed: true, count: 1, oldestMs: T0 + WINDOW });
    expect(store.size).toBe(1);
  });

  it('keeps the hit counted by the very operation that triggers a sweep', async () => {
    const store = new MemoryRateLimitStore();
    for (let i = 0; i < 999; i++) await store.peek(`ip-${i}`, T0, WINDOW, 1);
    expect(await store.consume('k', T0, WINDOW, 1)).toEqual({ allowed: true, count: 1, oldestMs: T0 }); // the 1000th
    expect(await store.consume('k', T0 + 1, WINDOW, 1)).toEqual({ allowed: false, count: 1, oldestMs: T0 });
  });
});
