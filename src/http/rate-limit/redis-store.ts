import { Redis } from 'ioredis';
import { randomHex } from '../../lib/crypto.js';
import type { RateLimitStore, WindowQuery, WindowState } from './store.js';

// Each script runs atomically in Redis, so every node shares one exact window per key.
// A sorted set per key: score = hit time (ms), member unique per hit. The scripts share these functions:
// each returns {allowed, count, oldest hit or '-1'} for one key.
const WINDOW_FUNCTIONS = `
local function prune(key, now, window)
  redis.call('ZREMRANGEBYSCORE', key, '-inf', now - window)
  return redis.call('ZCARD', key)
end
local function oldest(key)
  return redis.call('ZRANGE', key, 0, 0, 'WITHSCORES')[2] or '-1'
end
local function consume(key, now, window, limit, member)
  local count = prune(key, now, window)
  local allowed = 0
  if count < limit then
    redis.call('ZADD', key, now, member)
    count = count + 1
    allowed = 1
  end
  redis.call('PEXPIRE', key, window)
  return {allowed, count, oldest(key)}
end
local function peek(key, now, window, limit)
  local count = prune(key, now, window)
  local allowed = 0
  if count < limit then allowed = 1 end
  return {allowed, count, oldest(key)}
end
`;

const CONSUME = `${WINDOW_FUNCTIONS}
return consume(KEYS[1], tonumber(ARGV[1]), tonumber(ARGV[2]), tonumber(ARGV[3]), ARGV[4])
`;

const PEEK = `${WINDOW_FUNCTIONS}
return peek(KEYS[1], tonumber(ARGV[1]), tonumber(ARGV[2]), tonumber(ARGV[3]))
`;

// consume on KEYS[1] and peek on KEYS[2] in one script: one round trip for a key-authenticated request.
const CONSUME_AND_PEEK = `${WINDOW_FUNCTIONS}
local now = tonumber(ARGV[1])
local a = consume(KEYS[1], now, tonumber(ARGV[2]), tonumber(ARGV[3]), ARGV[4])
local b = peek(KEYS[2], now, tonumber(ARGV[5]), tonumber(ARGV[6]))
return {a[1], a[2], a[3], b[1], b[2], b[3]}
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
