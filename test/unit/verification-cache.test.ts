import { describe, expect, it } from 'vitest';
import { VerificationCache } from '../../src/accounts/auth/verification-cache.js';

describe('machine-key verification cache', () => {
  it('remembers a verified key id, secret and stored hash together, and nothing else', () => {
    const cache = new VerificationCache();
    cache.remember(7, 'secret', 'hash-v1', 0);
    expect(cache.has(7, 'secret', 'hash-v1', 1)).toBe(true);
    expect(cache.has(7, 'other-secret', 'hash-v1', 1)).toBe(false);
    expect(cache.has(7, 'secret', 'hash-v2', 1)).toBe(false);
    expect(cache.has(8, 'secret', 'hash-v1', 1)).toBe(false);
  });

  it('forgets an entry once its lifetime has passed', () => {
    const cache = new VerificationCache(1000, 10);
    cache.remember(1, 's', 'h', 0);
    expect(cache.has(1, 's', 'h', 999)).toBe(true);
    expect(cache.has(1, 's', 'h', 1000)).toBe(false);
    expect(cache.size).toBe(0);
  });

  it('stays bounded, dropping the oldest entry first', () => {
    const cache = new VerificationCache(60_000, 3);
    for (let id = 1; id <= 5; id++) cache.remember(id, 's', 'h', id);
    expect(cache.size).toBe(3);
    expect(cache.has(1, 's', 'h', 10)).toBe(false);
    expect(cache.has(2, 's', 'h', 10)).toBe(false);
    expect(cache.has(5, 's', 'h', 10)).toBe(true);
  });

  it('keeps no secret in its keys', () => {
    const cache = new VerificationCache();
    cache.remember(1, 'plain-secret-canary', 'h', 0);
    const keys = [...(cache as unknown as { entries: Map<string, number> }).entries.keys()];
    expect(keys.join()).not.toContain('plain-secret-canary');
  });
});
