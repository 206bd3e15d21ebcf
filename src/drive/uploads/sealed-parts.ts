import { open, type FileHandle } from 'node:fs/promises';
import { createReadStream } from 'node:fs';
import { Readable } from 'node:stream';
import { generateKeypair, openSealedBox, randomKey, sealToPublicKey } from '../../accounts/vault/crypto.js';
import { FrameSealer, openSealedBlob, sealedSize } from '../sealed-blob.js';
import type { ChunkEncoder, Held, PartLayout } from './parts.js';

// The part file of an upload into a sealed folder (DESIGN 10, issue 35): every chunk is encrypted as it
// arrives, so the part file and the shared staging never hold a plaintext byte. The upload has an X25519
// keypair of its own, made at init while the owner's vault is open: the public key stays on the row, the
// secret key is sealed to the vault. A chunk is one record:
//
//   MAGIC 'GHC1' (4) | plaintext start (8) | plaintext length (4) | key length (2) | key | sealed bytes
//
// where key is a random chunk key sealed to the upload's public key and the sealed bytes are the chunk's
// plaintext in the sealed blob layout (sealed-blob.ts) under that key. Both carry the part name, start
// and length as associated data, so a record moved to another place or upload does not open. Receiving
// needs only the public key (no vault); completion opens the secret key with the open vault and streams
// the plaintext out record by record, in memory, into the file's own sealed blob.

const MAGIC = Buffer.from('GHC1', 'ascii');
const FIXED_HEADER_BYTES = MAGIC.length + 8 + 4 + 2;
const KEY_AD = (partName: string) => `fup_file_uploads:${partName}:key`;
const chunkAd = (partName: string, start: number, length: number) => `fup_file_uploads:${partName}:${start}+${length}`;

/** The upload's keypair: the public key (base64url) and the secret sealed to the vault's public key. */
export function newUploadKeys(vaultPublicKey: Buffer, partName: string): { publicKey: string; sealedKey: string } {
  const pair = generateKeypair();
  return { publicKey: pair.publicKey.toString('base64url'), sealedKey: sealToPublicKey(vaultPublicKey, pair.secretKey, KEY_AD(partName)) };
}

/** The upload's secret key, opened with the vault's secret key; null when it does not open. */
export function openUploadKey(vaultSecretKey: Buffer, partName: string, sealedKey: string): Buffer | null {
  return openSealedBox(vaultSecretKey, sealedKey, KEY_AD(partName));
}

/** Re-seals the upload's secret key to a new vault public key (a rotation); null when it does not open. */
export function resealUploadKey(oldSecretKey: Buffer, newPublicKey: Buffer, partName: string, sealedKey: string): string | null {
  const secret = openUploadKey(oldSecretKey, partName, sealedKey);
  return secret ? sealToPublicKey(newPublicKey, secret, KEY_AD(partName)) : null;
}

/** The encoder of one chunk's record: what appendChunk writes for `length` plaintext bytes from `start`. */
export function sealedChunkEncoder(publicKey: string, partName: string, start: number, length: number): ChunkEncoder & { storedLength: number } {
  const chunkKey = randomKey();
  const wrapped = Buffer.from(sealToPublicKey(Buffer.from(publicKey, 'base64url'), chunkKey, `${chunkAd(partName, start, length)}:key`), 'ascii');
  const header = Buffer.alloc(FIXED_HEADER_BYTES);
  MAGIC.copy(header, 0);
  header.writeBigUInt64BE(BigInt(start), 4);
  header.writeUInt32BE(length, 12);
  header.writeUInt16BE(wrapped.length, 16);
  const sealer = new FrameSealer(chunkKey, chunkAd(partName, start, length));
  return {
    head: [header, wrapped, sealer.header],
    update: (plain) => sealer.update(plain),
    final: () => [sealer.final()],
    storedLength: FIXED_HEADER_BYTES + wrapped.length + sealedSize(length),
  };
}

interface RecordHeader {
  start: number;
  length: number;
  wrapped: string;
  /** Header bytes (fixed part and key); the sealed bytes follow. */
  headerBytes: number;
  /** The whole record's bytes. */
  recordBytes: number;
}

async function readExactly(handle: FileHandle, position: number, length: number): Promise<Buffer | null> {
  const buf = Buffer.alloc(length);
  let got = 0;
  while (got < length) {
    const { bytesRead } = await handle.read(buf, got, length - got, position + got);
    if (bytesRead === 0) return null;
    got += bytesRead;
  }
  return buf;
}

/** The record header at `position`, or null when there is none (the file ends, or the bytes are not one). */
async function readHeader(handle: FileHandle, position: number): Promise<RecordHeader | null> {
  const fixed = await readExactly(handle, position, FIXED_HEADER_BYTES);
  if (!fixed || !fixed.subarray(0, MAGIC.length).equals(MAGIC)) return null;
  const start = Number(fixed.readBigUInt64BE(4));
  const length = fixed.readUInt32BE(12);
  const keyBytes = fixed.readUInt16BE(16);
  const key = await readExactly(handle, position + FIXED_HEADER_BYTES, keyBytes);
  if (!key) return null;
  const headerBytes = FIXED_HEADER_BYTES + keyBytes;
  return { start, length, wrapped: key.toString('ascii'), headerBytes, recordBytes: headerBytes + sealedSize(length) };
}

async function withFile<T>(file: string, none: T, fn: (handle: FileHandle, size: number) => Promise<T>): Promise<T> {
  let handle: FileHandle;
  try {
    handle = await open(file, 'r');
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return none;
    throw e;
  }
  try {
    return await fn(handle, (await handle.stat()).size);
  } finally {
    await handle.close();
  }
}

export const sealedLayout: PartLayout = {
  /** Walks the records from the start: each must follow the one before and be whole. */
  held(file, upTo) {
    return withFile(file, { plain: 0, stored: 0 }, async (handle, size) => {
      const at: Held = { plain: 0, stored: 0 };
      for (;;) {
        const h = await readHeader(handle, at.stored);
        if (!h || h.start !== at.plain || at.stored + h.recordBytes > size || at.plain + h.length > upTo) return at;
        at.plain += h.length;
        at.stored += h.recordBytes;
      }
    });
  },
  plainLength(file, storedStart, storedLength, plainStart) {
    return withFile(file, null, async (handle) => {
      const h = await readHeader(handle, storedStart);
      return h && h.start === plainStart && h.recordBytes === storedLength ? h.length : null;
    });
  },
};

/**
 * The plaintext of a sealed part file's first `plainSize` bytes, decrypted record by record as it
 * streams (never written anywhere): an error when a record is missing, moved or not what was sealed.
 */
export function openSealedPart(file: string, uploadSecretKey: Buffer, partName: string, plainSize: number): Readable {
  async function* plaintext(): AsyncGenerator<Buffer> {
    const records: Array<{ header: RecordHeader; at: number }> = await withFile(file, [], async (handle) => {
      const out: Array<{ header: RecordHeader; at: number }> = [];
      let plain = 0;
      let stored = 0;
      while (plain < plainSize) {
        const h = await readHeader(handle, stored);
        if (!h || h.start !== plain) throw new Error('the sealed part file is missing a chunk');
        out.push({ header: h, at: stored });
        plain += h.length;
        stored += h.recordBytes;
      }
      return out;
    });
    for (const { header, at } of records) {
      const ad = chunkAd(partName, header.start, header.length);
      const chunkKey = openSealedBox(uploadSecretKey, header.wrapped, `${ad}:key`);
      if (!chunkKey) throw new Error('a chunk of the sealed part file does not open');
      const base = at + header.headerBytes;
      const read = async (range: { start: number; end: number }) => createReadStream(file, { start: base + range.start, end: base + range.end });
      for await (const piece of await openSealedBlob(read, chunkKey, ad, header.length, null)) yield piece as Buffer;
    }
  }
  return Readable.from(plaintext(), { objectMode: false });
}
