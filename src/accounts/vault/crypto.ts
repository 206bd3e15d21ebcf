import { Algorithm, hashRaw } from '@node-rs/argon2';
import {
  createCipheriv,
  createDecipheriv,
  createHash,
  createPrivateKey,
  createPublicKey,
  diffieHellman,
  generateKeyPairSync,
  hkdfSync,
  randomBytes,
} from 'node:crypto';

// The vault's primitives (DESIGN 10), node `crypto` only (argon2id from @node-rs/argon2 for passphrases).
// Every ciphertext is bound to where it lives through AES-GCM's associated data, so a blob copied to
// another row or column does not open.

const IV_BYTES = 12;
const TAG_BYTES = 16;
export const KEY_BYTES = 32;

/** An X25519 keypair: both halves raw 32 bytes. */
export interface VaultKeypair {
  publicKey: Buffer;
  secretKey: Buffer;
}

export function generateKeypair(): VaultKeypair {
  const jwk = generateKeyPairSync('x25519').privateKey.export({ format: 'jwk' });
  return { publicKey: Buffer.from(jwk.x!, 'base64url'), secretKey: Buffer.from(jwk.d!, 'base64url') };
}

/** The public half of a raw secret key (to check that an unwrapped secret belongs to a vault). */
export function publicKeyOf(secretKey: Buffer): Buffer {
  const jwk = createPublicKey(privateKeyObject(secretKey)).export({ format: 'jwk' });
  return Buffer.from(jwk.x!, 'base64url');
}

function privateKeyObject(secretKey: Buffer) {
  // A JWK import would need x as well; PKCS#8 DER (RFC 8410: a fixed prefix + the 32 raw bytes) does not.
  const der = Buffer.concat([Buffer.from('302e020100300506032b656e04220420', 'hex'), secretKey]);
  return createPrivateKey({ key: der, format: 'der', type: 'pkcs8' });
}

function publicKeyObject(publicKey: Buffer) {
  return createPublicKey({ key: { kty: 'OKP', crv: 'X25519', x: publicKey.toString('base64url') }, format: 'jwk' });
}

export function hkdf(ikm: Buffer, salt: Buffer, info: string): Buffer {
  return Buffer.from(hkdfSync('sha256', ikm, salt, info, KEY_BYTES));
}

/** AES-256-GCM: iv | tag | ciphertext, base64url. */
export function aeadSeal(key: Buffer, plaintext: Buffer, ad: string): string {
  const iv = randomBytes(IV_BYTES);
  const cipher = createCipheriv('aes-256-gcm', key, iv);
  cipher.setAAD(Buffer.from(ad, 'utf8'));
  const body = Buffer.concat([cipher.update(plaintext), cipher.final()]);
  return Buffer.concat([iv, cipher.getAuthTag(), body]).toString('base64url');
}

/** Opens an aeadSeal blob; null when the key, the associated data or the bytes are wrong. */
export function aeadOpen(key: Buffer, sealed: string, ad: string): Buffer | null {
  const raw = Buffer.from(sealed, 'base64url');
  if (raw.length < IV_BYTES + TAG_BYTES) return null;
  try {
    const decipher = createDecipheriv('aes-256-gcm', key, raw.subarray(0, IV_BYTES));
    decipher.setAAD(Buffer.from(ad, 'utf8'));
    decipher.setAuthTag(raw.subarray(IV_BYTES, IV_BYTES + TAG_BYTES));
    return Buffer.concat([decipher.update(raw.subarray(IV_BYTES + TAG_BYTES)), decipher.final()]);
  } catch {
    return null;
  }
}

/** The PRF salt every vault passkey evaluates (the browser sends the 32-byte output). */
export const PRF_SALT = createHash('sha256').update('gatehouse-vault-kek').digest();

/** Key-encryption keys, one per unlocker type; the salt is the wrap row's own random salt. */
export function kekFromPrf(prfOutput: Buffer, salt: Buffer): Buffer {
  return hkdf(prfOutput, salt, 'gatehouse vault kek: passkey');
}

export function kekFromRecoveryCode(code: string, salt: Buffer): Buffer {
  return hkdf(Buffer.from(normaliseRecoveryCode(code), 'utf8'), salt, 'gatehouse vault kek: recovery code');
}

export async function kekFromPassphrase(passphrase: string, salt: Buffer): Promise<Buffer> {
  return hashRaw(passphrase, { algorithm: Algorithm.Argon2id, salt, outputLen: KEY_BYTES, memoryCost: 19456, timeCost: 2, parallelism: 1 });
}

/** The associated data of a wrap: its row id, so a wrapped key moved to another row does not open. */
export function wrapAd(wrapId: number): string {
  return `uew:${wrapId}`;
}

export function wrapSecret(kek: Buffer, secretKey: Buffer, wrapId: number): string {
  return aeadSeal(kek, secretKey, wrapAd(wrapId));
}

export function unwrapSecret(kek: Buffer, wrapped: string, wrapId: number): Buffer | null {
  const out = aeadOpen(kek, wrapped, wrapAd(wrapId));
  return out && out.length === KEY_BYTES ? out : null;
}

/**
 * Seals bytes (a content key) to a vault's public key: an ephemeral X25519 agreement, HKDF over it and
 * both public keys, AES-256-GCM. Output: ephemeral public key (32) | aeadSeal blob, base64url.
 */
export function sealToPublicKey(recipient: Buffer, plaintext: Buffer, ad: string): string {
  const eph = generateKeyPairSync('x25519');
  const ephPublic = Buffer.from(eph.privateKey.export({ format: 'jwk' }).x!, 'base64url');
  const shared = diffieHellman({ privateKey: eph.privateKey, publicKey: publicKeyObject(recipient) });
  const key = hkdf(shared, Buffer.concat([ephPublic, recipient]), 'gatehouse vault seal');
  return `${ephPublic.toString('base64url')}.${aeadSeal(key, plaintext, ad)}`;
}

export function openSealedBox(secretKey: Buffer, sealed: string, ad: string): Buffer | null {
  const dot = sealed.indexOf('.');
  if (dot !== 43) return null;
  try {
    const ephPublic = Buffer.from(sealed.slice(0, dot), 'base64url');
    const recipient = publicKeyOf(secretKey);
    const shared = diffieHellman({ privateKey: privateKeyObject(secretKey), publicKey: publicKeyObject(ephPublic) });
    return aeadOpen(hkdf(shared, Buffer.concat([ephPublic, recipient]), 'gatehouse vault seal'), sealed.slice(dot + 1), ad);
  } catch {
    return null;
  }
}

export function randomKey(): Buffer {
  return randomBytes(KEY_BYTES);
}

export function randomSalt(): Buffer {
  return randomBytes(16);
}

// Recovery codes: 26 Crockford base32 characters = 130 bits; 10 per set.
const CROCKFORD = '0123456789ABCDEFGHJKMNPQRSTVWXYZ';
export const RECOVERY_CODE_LENGTH = 26;
export const RECOVERY_CODE_COUNT = 10;

export function generateRecoveryCode(): string {
  const bytes = randomBytes(RECOVERY_CODE_LENGTH);
  let out = '';
  // 256 is a multiple of 32: the low five bits of each byte are uniform.
  for (let i = 0; i < RECOVERY_CODE_LENGTH; i++) out += CROCKFORD[bytes[i]! & 31];
  return out;
}

export function generateRecoveryCodes(): string[] {
  return Array.from({ length: RECOVERY_CODE_COUNT }, generateRecoveryCode);
}

/** What a person typed, in canonical form: case, spaces and hyphens ignored, O→0 and I/L→1 (Crockford). */
export function normaliseRecoveryCode(input: string): string {
  return input
    .toUpperCase()
    .replace(/[\s-]/g, '')
    .replace(/O/g, '0')
    .replace(/[IL]/g, '1');
}

export function isRecoveryCodeShaped(input: string): boolean {
  const n = normaliseRecoveryCode(input);
  return n.length === RECOVERY_CODE_LENGTH && [...n].every((c) => CROCKFORD.includes(c));
}
