import { describe, expect, it } from 'vitest';
import {
  PRF_SALT,
  aeadOpen,
  aeadSeal,
  generateKeypair,
  generateRecoveryCodes,
  isRecoveryCodeShaped,
  kekFromPassphrase,
  kekFromPrf,
  kekFromRecoveryCode,
  normaliseRecoveryCode,
  openSealedBox,
  publicKeyOf,
  randomKey,
  randomSalt,
  sealToPublicKey,
  unwrapSecret,
  wrapSecret,
} from '../../src/accounts/vault/crypto.js';
import { createHash } from 'node:crypto';

describe('vault crypto', () => {
  it('makes X25519 keypairs whose public half is derivable from the secret', () => {
    const a = generateKeypair();
    const b = generateKeypair();
    expect(a.publicKey).toHaveLength(32);
    expect(a.secretKey).toHaveLength(32);
    expect(publicKeyOf(a.secretKey).equals(a.publicKey)).toBe(true);
    expect(a.secretKey.equals(b.secretKey)).toBe(false);
  });

  it('binds AES-GCM to its associated data and detects tampering', () => {
    const key = randomKey();
    const sealed = aeadSeal(key, Buffer.from('hello'), 'fil_files:1:fil_name');
    expect(aeadOpen(key, sealed, 'fil_files:1:fil_name')?.toString()).toBe('hello');
    expect(aeadOpen(key, sealed, 'fil_files:2:fil_name')).toBeNull();
    expect(aeadOpen(randomKey(), sealed, 'fil_files:1:fil_name')).toBeNull();
    const raw = Buffer.from(sealed, 'base64url');
    raw[raw.length - 1]! ^= 1;
    expect(aeadOpen(key, raw.toString('base64url'), 'fil_files:1:fil_name')).toBeNull();
    expect(aeadOpen(key, 'short', 'x')).toBeNull();
  });

  it('wraps a secret key under each kind of key-encryption key, bound to the wrap row id', async () => {
    const { secretKey } = generateKeypair();
    const salt = randomSalt();
    const prf = randomKey();
    const kek = kekFromPrf(prf, salt);
    const wrapped = wrapSecret(kek, secretKey, 7);
    expect(unwrapSecret(kek, wrapped, 7)?.equals(secretKey)).toBe(true);
    expect(unwrapSecret(kek, wrapped, 8)).toBeNull();
    expect(unwrapSecret(kekFromPrf(randomKey(), salt), wrapped, 7)).toBeNull();
    expect(wrapped).not.toContain(secretKey.toString('base64url'));

    const codeKek = kekFromRecoveryCode('abcd-efgh-jkmn-pqrs-tvwx-yz0123', salt);
    expect(kekFromRecoveryCode('ABCDEFGHJKMNPQRSTVWXYZ0123', salt).equals(codeKek)).toBe(true);
    expect(kekFromRecoveryCode('ABCDEFGHJKMNPQRSTVWXYZ0124', salt).equals(codeKek)).toBe(false);

    const p1 = await kekFromPassphrase('correct horse battery staple', salt);
    const p2 = await kekFromPassphrase('correct horse battery staple', salt);
    expect(p1.equals(p2)).toBe(true);
    expect((await kekFromPassphrase('correct horse battery stapler', salt)).equals(p1)).toBe(false);
    expect((await kekFromPassphrase('correct horse battery staple', randomSalt())).equals(p1)).toBe(false);
  });

  it('seals a content key to a public key that only its secret key opens', () => {
    const a = generateKeypair();
    const b = generateKeypair();
    const contentKey = randomKey();
    const sealed = sealToPublicKey(a.publicKey, contentKey, 'fil_files:3');
    expect(openSealedBox(a.secretKey, sealed, 'fil_files:3')?.equals(contentKey)).toBe(true);
    expect(openSealedBox(a.secretKey, sealed, 'fil_files:4')).toBeNull();
    expect(openSealedBox(b.secretKey, sealed, 'fil_files:3')).toBeNull();
    expect(sealToPublicKey(a.publicKey, contentKey, 'fil_files:3')).not.toBe(sealed);
    expect(openSealedBox(a.secretKey, 'garbage', 'x')).toBeNull();
  });

  it('issues 10 distinct 26-character Crockford codes and reads typed variants of them', () => {
    const codes = generateRecoveryCodes();
    expect(codes).toHaveLength(10);
    expect(new Set(codes).size).toBe(10);
    for (const c of codes) expect(c).toMatch(/^[0-9ABCDEFGHJKMNPQRSTVWXYZ]{26}$/);
    expect(normaliseRecoveryCode('oil-0i1 l')).toBe('0110111');
    expect(isRecoveryCodeShaped(codes[0]!.toLowerCase().replace(/(.{5})/g, '$1-'))).toBe(true);
    expect(isRecoveryCodeShaped('ABC')).toBe(false);
    expect(isRecoveryCodeShaped('U'.repeat(26))).toBe(false);
  });

  it('uses SHA-256 of gatehouse-vault-kek as the PRF salt', () => {
    expect(PRF_SALT.equals(createHash('sha256').update('gatehouse-vault-kek').digest())).toBe(true);
  });
});
