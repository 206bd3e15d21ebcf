import { Redis } from 'ioredis';
import { randomHex } from '../../lib/crypto.js';
import type { RateLimitStore, WindowQuery, WindowState } from './store.js';

// Each script runs atomically in Redis, so every node shares one exact window per key.
// A sorted set per key: score = hit time (ms), member unique per hit.
const CONSUME = `
local key = KEYS[1]
local now = tonumber(ARGV[1])
local window = tonumber(ARGV[2])
local limit = tonumber(ARGV[3])
redis.call('ZREMRANGEBYSCORE', key, '-inf', now - window)
local count = redis.call('ZCARD', key)
local allowed = 0
if count < limit then
  redis.call('ZADD', key, now, ARGV[4])
  count = count + 1
  allowed = 1
end
redis.call('PEXPIRE', key, window)
local oldest = redis.call('ZRANGE', key, 0, 0, 'WITHSCORES')
return {allowed, count, oldest[2] or '-1'}
`;

const PEEK = `
local key = KEYS[1]
local now = tonumber(ARGV[1])
local window = tonumber(ARGV[2])
local limit = tonumber(ARGV[3])
redis.call('ZREMRANGEBYSCORE', key, '-inf', now - window)
local count = redis.call('ZCARD', key)
local oldest = redis.call('ZRANGE', key, 0, 0, 'WITHSCORES')
local allowed = 0
if count < limit then allowed = 1 end
return {allowed, count, oldest[2] or '-1'}
`;

// CONSUME on KEYS[1] and PEEK on KEYS[2], in one script (one round trip for a key-authenticated request).
const CONSUME_AND_PEEK = `
local now = tonumber(ARGV[1])
local function window(key, span)
  redis.call('ZREMRANGEBYSCORE', key, '-inf', now - span)
  return redis.call('ZCARD', key)
end
local function oldest(key)
  return redis.call('ZRANGE', key, 0, 0, 'WITHSCORES')[2] or '-1'
end
local span1 = tonumber(ARGV[2])
local count1 = window(KEYS[1], span1)
local allowed1 = 0
if count1 < tonumber(ARGV[3]) then
  redis.call('ZADD', KEYS[1], now, ARGV[4])
  count1 = count1 + 1
  allowed1 = 1
end
redis.call('PEXPIRE', KEYS[1], span1)
local count2 = window(KEYS[2], tonumber(ARGV[5]))
local allowed2 = 0
if count2 < tonumber(ARGV[6]) then allowed2 = 1 end
return {allowed1, count1, oldest(KEYS[1]), allowed2, count2, oldest(KEYS[2])}
`;

const RECORD = `
local key = KEYS[1]
local now = tonumber(ARGV[1])
local window = tonumber(ARGV[2])
redis.call('ZREMRANGEBYSCORE', key, '-inf', now - window)
redis.call('ZADD', key, now, ARGV[3])
redis.call('PEXPIRE', key, window)
return 1
`;

type ScriptReply = [number, number, string];

interface RateLimitRedis extends Redis {
  rlConsume(key: string, now: number, window: number, limit: number, member: string): Promise<ScriptReply>;
  rlPeek(key: string, now: number, window: number, limit: number): Promise<ScriptReply>;
  rlRecord(key: string, now: number, window: number, member: string): Promise<number>;
  rlConsumeAndPeek(
    consumedKey: string, peekedKey: string, now: number,
    consumedWindow: number, consumedLimit: number, member: string, peekedWindow: number, peekedLimit: number,
  ): Promise<[...ScriptReply, ...ScriptReply]>;
}

function toState(reply: ScriptReply): WindowState {
  const oldest = Number(reply[2]);
  return { allowed: reply[0] === 1, count: Number(reply[1]), oldestMs: oldest < 0 ? null : oldest };
}

/** Buckets shared by every node through Redis (used when REDIS_URL is set). */
export class RedisRateLimitStore implements RateLimitStore {
  private readonly redis: RateLimitRedis;

  constructor(url: string, private readonly prefix = 'gatehouse:rl:') {
    const redis = new Redis(url, { maxRetriesPerRequest: 2, enableAutoPipelining: true, lazyConnect: false });
    redis.defineCommand('rlConsume', { numberOfKeys: 1, lua: CONSUME });
    redis.defineCommand('rlPeek', { numberOfKeys: 1, lua: PEEK });
    redis.defineCommand('rlRecord', { numberOfKeys: 1, lua: RECORD });
    redis.defineCommand('rlConsumeAndPeek', { numberOfKeys: 2, lua: CONSUME_AND_PEEK });
    this.redis = redis as RateLimitRedis;
  }

  private member(nowMs: number): string {
    return `${nowMs}:${randomHex(6)}`;
  }

  async consume(key: string, nowMs: number, windowMs: number, limit: number): Promise<WindowState> {
    return toState(await this.redis.rlConsume(this.prefix + key, nowMs, windowMs, limit, this.member(nowMs)));
  }

  async peek(key: string, nowMs: number, windowMs: number, limit: number): Promise<WindowState> {
    return toState(await this.redis.rlPeek(this.prefix + key, nowMs, windowMs, limit));
  }

  async consumeAndPeek(consumed: WindowQuery, peeked: WindowQuery, nowMs: number): Promise<[WindowState, WindowState]> {
    const reply = await this.redis.rlConsumeAndPeek(
      this.prefix + consumed.key, this.prefix + peeked.key, nowMs,
      consumed.windowMs, consumed.limit, this.member(nowMs), peeked.windowMs, peeked.limit,
    );
    return [toState([reply[0], reply[1], reply[2]]), toState([reply[3], reply[4], reply[5]])];
  }

  async record(key: string, nowMs: number, windowMs: number): Promise<void> {
    await this.redis.rlRecord(this.prefix + key, nowMs, windowMs, this.member(nowMs));
  }

  async close(): Promise<void> {
    await this.redis.quit().catch(() => this.redis.disconnect());
  }
}
