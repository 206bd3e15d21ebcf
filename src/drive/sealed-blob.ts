import { createCipheriv, createDecipheriv, hkdfSync, randomBytes } from 'node:crypto';
import { Transform, type Readable, type TransformCallback } from 'node:stream';
import type { ByteRange } from './blobs/store.js';

// The bytes of a sealed Drive file as they are stored (DESIGN 10): chunked AES-256-GCM, so a file is
// encrypted and decrypted as a stream (never held whole) and a byte range opens only the frames it
// touches. Layout: MAGIC (4) | salt (16) | frames. Frame i holds plaintext bytes [i*FRAME, (i+1)*FRAME)
// encrypted under a key derived (HKDF) from the record's content key and the blob's salt, with the nonce
// the frame's index and a last-frame flag (so frames cannot be reordered, dropped or the file cut short),
// then its 16-byte tag. Every frame carries the record's `{table}:{id}:{column}` as associated data, so
// a blob moved to another file does not open. An empty file is one empty last frame.

const MAGIC = Buffer.from('GHS1', 'ascii');
const SALT_BYTES = 16;
const TAG_BYTES = 16;
export const SEALED_HEADER_BYTES = MAGIC.length + SALT_BYTES;
/** Plaintext bytes per frame. */
export const FRAME_BYTES = 64 * 1024;
const SEALED_FRAME_BYTES = FRAME_BYTES + TAG_BYTES;

function frameCount(plainSize: number): number {
  return Math.max(1, Math.ceil(plainSize / FRAME_BYTES));
}

/** The stored size of a sealed blob of `plainSize` plaintext bytes. */
export function sealedSize(plainSize: number): number {
  return SEALED_HEADER_BYTES + plainSize + frameCount(plainSize) * TAG_BYTES;
}

function frameKey(contentKey: Buffer, salt: Buffer): Buffer {
  return Buffer.from(hkdfSync('sha256', contentKey, salt, 'gatehouse drive blob frames', 32));
}

function nonce(index: number, last: boolean): Buffer {
  const n = Buffer.alloc(12);
  n.writeUIntBE(index, 5, 6);
  n[11] = last ? 1 : 0;
  return n;
}

function sealFrame(key: Buffer, ad: Buffer, index: number, last: boolean, plain: Buffer): Buffer {
  const c = createCipheriv('aes-256-gcm', key, nonce(index, last));
  c.setAAD(ad);
  return Buffer.concat([c.update(plain), c.final(), c.getAuthTag()]);
}

function openFrame(key: Buffer, ad: Buffer, index: number, last: boolean, frame: Buffer): Buffer {
  if (frame.length < TAG_BYTES) throw new Error('sealed blob frame is truncated');
  const d = createDecipheriv('aes-256-gcm', key, nonce(index, last));
  d.setAAD(ad);
  d.setAuthTag(frame.subarray(frame.length - TAG_BYTES));
  return Buffer.concat([d.update(frame.subarray(0, frame.length - TAG_BYTES)), d.final()]);
}

/**
 * Encrypts plaintext into the sealed layout, synchronously, piece by piece: `header` first, then what
 * each `update` returns, then `final()`. Holds at most one frame plus one incoming piece.
 */
export class FrameSealer {
  readonly header: Buffer;
  private readonly key: Buffer;
  private readonly ad: Buffer;
  private pending: Buffer[] = [];
  private pendingBytes = 0;
  private index = 0;

  constructor(contentKey: Buffer, ad: string) {
    const salt = randomBytes(SALT_BYTES);
    this.key = frameKey(contentKey, salt);
    this.ad = Buffer.from(ad, 'utf8');
    this.header = Buffer.concat([MAGIC, salt]);
  }

  /** The sealed frames that `chunk` completes (none until more than a frame is pending). */
  update(chunk: Buffer): Buffer[] {
    this.pending.push(chunk);
    this.pendingBytes += chunk.length;
    // A frame goes out only once more bytes follow it: the last frame is sealed as last in final().
    if (this.pendingBytes <= FRAME_BYTES) return [];
    const out: Buffer[] = [];
    let all = Buffer.concat(this.pending);
    while (all.length > FRAME_BYTES) {
      out.push(sealFrame(this.key, this.ad, this.index++, false, all.subarray(0, FRAME_BYTES)));
      all = all.subarray(FRAME_BYTES);
    }
    this.pending = [all];
    this.pendingBytes = all.length;
    return out;
  }

  /** The last frame. */
  final(): Buffer {
    const last = sealFrame(this.key, this.ad, this.index, true, Buffer.concat(this.pending));
    this.pending = [];
    this.pendingBytes = 0;
    return last;
  }
}

/** Encrypts a plaintext stream into the sealed layout; holds at most one frame plus one incoming chunk. */
export class SealStream extends Transform {
  private readonly sealer: FrameSealer;

  constructor(contentKey: Buffer, ad: string) {
    super();
    this.sealer = new FrameSealer(contentKey, ad);
    this.push(this.sealer.header);
  }

  override _transform(chunk: Buffer, _enc: BufferEncoding, done: TransformCallback): void {
    for (const frame of this.sealer.update(chunk)) this.push(frame);
    done();
  }

  override _flush(done: TransformCallback): void {
    this.push(this.sealer.final());
    done();
  }
}

/** Decrypts frames [first..] of a sealed blob and passes on the plaintext bytes of `range` only. */
class OpenStream extends Transform {
  private buffered: Buffer[] = [];
  private bufferedBytes = 0;
  private index: number;
  private position: number;

  constructor(
    private readonly key: Buffer,
    private readonly ad: Buffer,
    private readonly lastIndex: number,
    private readonly plainSize: number,
    private readonly range: ByteRange,
  ) {
    super();
    this.index = Math.floor(range.start / FRAME_BYTES);
    this.position = this.index * FRAME_BYTES;
  }

  private openNext(frame: Buffer): void {
    const plain = openFrame(this.key, this.ad, this.index, this.index === this.lastIndex, frame);
    const from = Math.max(0, this.range.start - this.position);
    const to = Math.min(plain.length, this.range.end + 1 - this.position);
    if (to > from) this.push(plain.subarray(from, to));
    this.position += plain.length;
    this.index++;
  }

  override _transform(chunk: Buffer, _enc: BufferEncoding, done: TransformCallback): void {
    this.buffered.push(chunk);
    this.bufferedBytes += chunk.length;
    try {
      if (this.bufferedBytes >= SEALED_FRAME_BYTES) {
        let all = Buffer.concat(this.buffered);
        while (all.length >= SEALED_FRAME_BYTES && this.index < this.lastIndex) {
          this.openNext(all.subarray(0, SEALED_FRAME_BYTES));
          all = all.subarray(SEALED_FRAME_BYTES);
        }
        this.buffered = [all];
        this.bufferedBytes = all.length;
      }
      done();
    } catch (e) {
      done(e as Error);
    }
  }

  override _flush(done: TransformCallback): void {
    try {
      const rest = Buffer.concat(this.buffered);
      if (rest.length > 0) this.openNext(rest);
      if (this.position < Math.min(this.plainSize, this.range.end + 1)) throw new Error('sealed blob is truncated');
      done();
    } catch (e) {
      done(e as Error);
    }
  }
}

/** Reads stored bytes of a blob: [start, end] inclusive. */
export type BlobReader = (range: ByteRange) => Promise<Readable>;

async function readAll(stream: Readable): Promise<Buffer> {
  const parts: Buffer[] = [];
  for await (const chunk of stream) parts.push(chunk as Buffer);
  return Buffer.concat(parts);
}

/**
 * The plaintext bytes `range` (inclusive; the whole file when null) of a sealed blob holding `plainSize`
 * bytes, decrypted as they stream: only the frames covering the range are fetched. A stream error means
 * the bytes were not what was sealed (wrong key, another record's blob, tampering or truncation).
 */
export async function openSealedBlob(read: BlobReader, contentKey: Buffer, ad: string, plainSize: number, range: ByteRange | null): Promise<Readable> {
  const want = range ?? { start: 0, end: Math.max(0, plainSize - 1) };
  const header = await readAll(await read({ start: 0, end: SEALED_HEADER_BYTES - 1 }));
  if (header.length !== SEALED_HEADER_BYTES || !header.subarray(0, MAGIC.length).equals(MAGIC)) throw new Error('not a sealed blob');
  const key = frameKey(contentKey, header.subarray(MAGIC.length));
  const lastIndex = frameCount(plainSize) - 1;
  const first = Math.floor(want.start / FRAME_BYTES);
  const last = plainSize === 0 ? 0 : Math.floor(want.end / FRAME_BYTES);
  const start = SEALED_HEADER_BYTES + first * SEALED_FRAME_BYTES;
  const end = Math.min(SEALED_HEADER_BYTES + (last + 1) * SEALED_FRAME_BYTES, sealedSize(plainSize)) - 1;
  const body = await read({ start, end });
  const open = new OpenStream(key, Buffer.from(ad, 'utf8'), lastIndex, plainSize, plainSize === 0 ? { start: 0, end: -1 } : want);
  body.on('error', (e) => open.destroy(e));
  return body.pipe(open);
}
