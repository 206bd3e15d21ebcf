import { randomBytes } from 'node:crypto';
import { Readable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { FRAME_BYTES, openSealedBlob, SealStream, sealedSize } from '../../src/drive/sealed-blob.js';

// The sealed blob layout (chunked AES-256-GCM): streaming both ways, ranges that open only the frames
// they touch, and every kind of tampering refused.

async function collect(stream: Readable): Promise<Buffer> {
  const parts: Buffer[] = [];
  for await (const c of stream) parts.push(c as Buffer);
  return Buffer.concat(parts);
}

async function seal(plain: Buffer, key: Buffer, ad: string, pieces = 7): Promise<Buffer> {
  const step = Math.max(1, Math.ceil(plain.length / pieces));
  const chunks: Buffer[] = [];
  for (let i = 0; i < plain.length; i += step) chunks.push(plain.subarray(i, i + step));
  return collect(Readable.from(chunks).pipe(new SealStream(key, ad)));
}

const readerOf = (sealed: Buffer, reads: Array<[number, number]> = []) => async (r: { start: number; end: number }) => {
  reads.push([r.start, r.end]);
  return Readable.from([sealed.subarray(r.start, r.end + 1)]);
};

const open = (sealed: Buffer, key: Buffer, ad: string, size: number, range: { start: number; end: number } | null, reads?: Array<[number, number]>) =>
  openSealedBlob(readerOf(sealed, reads), key, ad, size, range).then(collect);

describe('sealed blobs', () => {
  const key = randomBytes(32);
  for (const size of [0, 1, 100, FRAME_BYTES - 1, FRAME_BYTES, FRAME_BYTES + 1, 3 * FRAME_BYTES + 1234]) {
    it(`round-trips ${size} bytes whole and by ranges, at the predicted size`, async () => {
      const plain = randomBytes(size);
      const sealed = await seal(plain, key, 'fil_files:1:content');
      expect(sealed.length).toBe(sealedSize(size));
      expect((await open(sealed, key, 'fil_files:1:content', size, null)).equals(plain)).toBe(true);
      if (size > 20) {
        for (const [s, e] of [[0, size - 1], [10, size - 5], [size - 2, size - 1], [FRAME_BYTES - 3, Math.min(size - 1, FRAME_BYTES + 3)]]) {
          if (s! < 0 || s! > e!) continue;
          expect((await open(sealed, key, 'fil_files:1:content', size, { start: s!, end: e! })).equals(plain.subarray(s!, e! + 1))).toBe(true);
        }
      }
    });
  }

  it('reads only the frames a range touches', async () => {
    const size = 5 * FRAME_BYTES;
    const plain = randomBytes(size);
    const sealed = await seal(plain, key, 'ad');
    const reads: Array<[number, number]> = [];
    const got = await open(sealed, key, 'ad', size, { start: 2 * FRAME_BYTES + 5, end: 2 * FRAME_BYTES + 50 }, reads);
    expect(got.equals(plain.subarray(2 * FRAME_BYTES + 5, 2 * FRAME_BYTES + 51))).toBe(true);
    const body = reads[1]!;
    expect(body[1] - body[0] + 1).toBe(FRAME_BYTES + 16);
  });

  it('refuses another key, another record, a flipped byte, a dropped frame and a cut-off end', async () => {
    const size = 3 * FRAME_BYTES;
    const plain = randomBytes(size);
    const sealed = await seal(plain, key, 'fil_files:1:content');
    await expect(open(sealed, randomBytes(32), 'fil_files:1:content', size, null)).rejects.toThrow();
    await expect(open(sealed, key, 'fil_files:2:content', size, null)).rejects.toThrow();
    const flipped = Buffer.from(sealed);
    flipped[sealed.length - 40]! ^= 1;
    await expect(open(flipped, key, 'fil_files:1:content', size, null)).rejects.toThrow();
    const frame = FRAME_BYTES + 16;
    const dropped = Buffer.concat([sealed.subarray(0, 20 + frame), sealed.subarray(20 + 2 * frame)]);
    await expect(open(dropped, key, 'fil_files:1:content', size - FRAME_BYTES, null)).rejects.toThrow();
    const cut = sealed.subarray(0, 20 + 2 * frame);
    await expect(open(cut, key, 'fil_files:1:content', size, null)).rejects.toThrow();
    await expect(open(cut, key, 'fil_files:1:content', 2 * FRAME_BYTES, null)).rejects.toThrow();
  });

  it('never writes the same ciphertext twice for the same plaintext', async () => {
    const plain = randomBytes(1000);
    expect((await seal(plain, key, 'ad')).equals(await seal(plain, key, 'ad'))).toBe(false);
  });
});
