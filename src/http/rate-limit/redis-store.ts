import { Redis } from 'ioredis';
import { randomHex } from '../../lib/crypto.js';
import type { RateLimitStore, WindowState } from './store.js';

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

  async record(key: string, nowMs: number, windowMs: number): Promise<void> {
    await this.redis.rlRecord(this.prefix + key, nowMs, windowMs, this.member(nowMs));
  }

  async close(): Promise<void> {
    await this.redis.quit().catch(() => this.redis.disconnect());
  }
}
