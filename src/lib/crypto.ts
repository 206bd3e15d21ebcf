import { createHash, hash, randomBytes, timingSafeEqual } from 'node:crypto';

/** Randomness and hashing in one place, so the rest of the code never reaches for Math.random. */
export function randomHex(bytes: number): string {
  return randomBytes(bytes).toString('hex');
}

/** One-shot `hash` (a third of createHash's cost on a key-sized input: every authenticated request makes one). */
export function sha256Hex(input: string | Buffer): string {
  return hash('sha256', input, 'hex');
}

/** Constant-time string equality; unequal lengths compare a digest so timing does not leak length. */
export function safeEqual(a: string, b: string): boolean {
  const ab = Buffer.from(a, 'utf8');
  const bb = Buffer.from(b, 'utf8');
  if (ab.length !== bb.length) {
    timingSafeEqual(createHash('sha256').update(ab).digest(), createHash('sha256').update(bb).digest());
    return false;
  }
  return timingSafeEqual(ab, bb);
}

const READABLE = 'ABCDEFGHJKLMNPQRSTUVWXYZ23456789';
/** A code for people to type: no 0/O or 1/I/L. */
export function randomReadableCode(length: number): string {
  const bytes = randomBytes(length);
  let out = '';
  for (let i = 0; i < length; i++) out += READABLE[bytes[i]! % READABLE.length];
  return out;
}
