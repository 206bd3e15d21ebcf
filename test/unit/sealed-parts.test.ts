import { mkdtemp, readFile, rm, truncate, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { generateKeypair } from '../../src/accounts/vault/crypto.js';
import { newUploadKeys, openSealedPart, openUploadKey, resealUploadKey, sealedChunkEncoder, sealedLayout } from '../../src/drive/uploads/sealed-parts.js';

// The sealed part file (issue 35 item 8): each chunk one sealed record. What a node holds after a crash
// mid-write is the whole records before the cut; the plaintext streams out record by record; a record
// that was altered, moved or belongs to another upload does not open.

const PART = `${'a'.repeat(32)}.part`;

function record(publicKey: string, plain: Buffer, start: number, part = PART): { bytes: Buffer; storedLength: number } {
  const enc = sealedChunkEncoder(publicKey, part, start, plain.length);
  const bytes = Buffer.concat([...enc.head, ...enc.update(plain.subarray(0, 1000)), ...enc.update(plain.subarray(1000)), ...enc.final()]);
  return { bytes, storedLength: enc.storedLength };
}

async function readAll(s: NodeJS.ReadableStream): Promise<Buffer> {
  const parts: Buffer[] = [];
  for await (const p of s) parts.push(p as Buffer);
  return Buffer.concat(parts);
}

describe('sealed part files', () => {
  let dir: string;
  beforeAll(async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), 'gh-sealed-parts-'));
  });
  afterAll(async () => rm(dir, { recursive: true, force: true }));

  const vault = generateKeypair();
  const keys = newUploadKeys(vault.publicKey, PART);
  const secret = openUploadKey(vault.secretKey, PART, keys.sealedKey)!;
  const plain = Buffer.from('PLAINTEXT '.repeat(20_000));
  const cuts = [0, 70_000, 140_000, plain.length];

  async function sealedFile(name: string) {
    const recs = cuts.slice(0, -1).map((start, i) => record(keys.publicKey, plain.subarray(start, cuts[i + 1]), start));
    for (const r of recs) expect(r.bytes.length).toBe(r.storedLength);
    const file = path.join(dir, name);
    await writeFile(file, Buffer.concat(recs.map((r) => r.bytes)));
    return { file, recs };
  }

  it('holds whole records only, up to the offset asked for, and streams the plaintext back', async () => {
    const { file, recs } = await sealedFile('whole.part');
    const [a, b, c] = recs.map((r) => r.bytes.length) as [number, number, number];
    expect((await readFile(file)).includes(Buffer.from('PLAINTEXT'))).toBe(false);
    expect(await sealedLayout.held(file, plain.length)).toEqual({ plain: plain.length, stored: a + b + c });
    expect(await sealedLayout.held(file, 140_000)).toEqual({ plain: 140_000, stored: a + b });
    expect(await sealedLayout.held(file, 139_999)).toEqual({ plain: 70_000, stored: a });
    expect(await sealedLayout.plainLength(file, a, b, 70_000)).toBe(70_000);
    expect(await sealedLayout.plainLength(file, a, b, 0)).toBeNull();
    expect((await readAll(openSealedPart(file, secret, PART, plain.length))).equals(plain)).toBe(true);
    // A crash in the middle of the third record: the first two are what the node holds.
    await truncate(file, a + b + 100);
    expect(await sealedLayout.held(file, plain.length)).toEqual({ plain: 140_000, stored: a + b });
    expect(await sealedLayout.held(path.join(dir, 'missing.part'), 10)).toEqual({ plain: 0, stored: 0 });
  });

  it('does not open an altered record, another upload\'s key, or records of another part', async () => {
    const { file } = await sealedFile('altered.part');
    const bytes = await readFile(file);
    bytes[bytes.length - 5]! ^= 1;
    await writeFile(file, bytes);
    await expect(readAll(openSealedPart(file, secret, PART, plain.length))).rejects.toThrow();

    const { file: good } = await sealedFile('good.part');
    const other = openUploadKey(vault.secretKey, PART, newUploadKeys(vault.publicKey, PART).sealedKey)!;
    await expect(readAll(openSealedPart(good, other, PART, plain.length))).rejects.toThrow();
    await expect(readAll(openSealedPart(good, secret, `${'b'.repeat(32)}.part`, plain.length))).rejects.toThrow();
    // The upload's key follows a vault rotation, and only through the old secret.
    const next = generateKeypair();
    const resealed = resealUploadKey(vault.secretKey, next.publicKey, PART, keys.sealedKey)!;
    expect(openUploadKey(next.secretKey, PART, resealed)!.equals(secret)).toBe(true);
    expect(resealUploadKey(next.secretKey, next.publicKey, PART, keys.sealedKey)).toBeNull();
  });
});
