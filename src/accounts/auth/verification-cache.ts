import { sha256Hex } from '../../lib/crypto.js';

/**
 * Remembers that a presented machine-key secret verified against a stored argon2id hash, so the slow
 * hash is paid once per key and secret rather than per request. It proves only that match: activity,
 * expiry, revocation and IP are read from the key row on every request. Keyed by key id, a SHA-256 of
 * the presented secret, and the stored hash itself (a rotated secret misses). Bounded, short-lived, and
 * safe to lose.
 */
export class VerificationCache {
  private readonly entries = new Map<string, number>();

  constructor(
    private readonly ttlMs = 5 * 60_000,
    private readonly maxEntries = 10_000,
  ) {}

  private key(keyId: number, secret: string, storedHash: string): string {
    return `${keyId}:${sha256Hex(`${secret}\u0000${storedHash}`)}`;
  }

  has(keyId: number, secret: string, storedHash: string, nowMs: number): boolean {
    const k = this.key(keyId, secret, storedHash);
    const expires = this.entries.get(k);
    if (expires === undefined) return false;
    if (expires <= nowMs) {
      this.entries.delete(k);
      return false;
    }
    return true;
  }

  remember(keyId: number, secret: string, storedHash: string, nowMs: number): void {
    const k = this.key(keyId, secret, storedHash);
    this.entries.delete(k);
    if (this.entries.size >= this.maxEntries) {
      const oldest = this.entries.keys().next().value;
      if (oldest !== undefined) this.entries.delete(oldest);
    }
    this.entries.set(k, nowMs + this.ttlMs);
  }

  get size(): number {
    return this.entries.size;
  }
}
