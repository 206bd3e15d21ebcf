import { createHash, type Hash } from 'node:crypto';
import { createReadStream, createWriteStream } from 'node:fs';
import { mkdir, open, stat, truncate, unlink } from 'node:fs/promises';
import path from 'node:path';
import { Transform, type Readable, type TransformCallback } from 'node:stream';
import { pipeline } from 'node:stream/promises';

// Part files: the bytes of a pending upload, appended chunk by chunk in DATA_DIR/uploads. A chunk is
// streamed from the request to the file through the hash, never held whole; a chunk that fails (short,
// long, stalled, dropped) is cut back off the file, so the file always ends at received_bytes.

const PART_NAME_RE = /^[0-9a-f]{32}\.part$/;

export function partPath(uploadsDir: string, partName: string): string {
  if (!PART_NAME_RE.test(partName)) throw new Error('not a part file name');
  return path.join(uploadsDir, partName);
}

export function isPartName(name: string): boolean {
  return PART_NAME_RE.test(name);
}

/** The part file's length; 0 when it does not exist yet. */
export async function partSize(file: string): Promise<number> {
  try {
    return (await stat(file)).size;
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return 0;
    throw e;
  }
}

export async function removePart(file: string): Promise<void> {
  await unlink(file).catch((e: NodeJS.ErrnoException) => {
    if (e.code !== 'ENOENT') throw e;
  });
}

/**
 * Running SHA-256 states of uploads this node is receiving, keyed by upload, each valid at one offset.
 * Only a cache: a state that is missing (another node took the previous chunk, a restart, eviction) is
 * rebuilt by hashing the part file up to the offset. Bounded; the least recently used goes first.
 */
export class HashStates {
  private readonly states = new Map<number, { offset: number; hash: Hash }>();

  constructor(private readonly max = 1024) {}

  /** A copy of the state at `offset`, from the cache or from the file. */
  async at(uploadId: number, offset: number, file: string): Promise<Hash> {
    const cached = this.states.get(uploadId);
    if (cached && cached.offset === offset) return cached.hash.copy();
    const hash = createHash('sha256');
    if (offset > 0) await pipeline(createReadStream(file, { start: 0, end: offset - 1 }), async (source: AsyncIterable<Buffer>) => {
      for await (const chunk of source) hash.update(chunk);
    });
    return hash;
  }

  remember(uploadId: number, offset: number, hash: Hash): void {
    this.states.delete(uploadId);
    this.states.set(uploadId, { offset, hash });
    if (this.states.size > this.max) this.states.delete(this.states.keys().next().value as number);
  }

  forget(uploadId: number): void {
    this.states.delete(uploadId);
  }
}

export type ChunkFailure = 'short' | 'long' | 'stalled' | 'dropped';

export class ChunkBodyError extends Error {
  constructor(readonly failure: ChunkFailure) {
    super(`chunk body ${failure}`);
  }
}

/** Passes exactly `length` bytes into the hash; more, or fewer by the end, fails the stream. */
class ChunkMeter extends Transform {
  private count = 0;

  constructor(
    private readonly length: number,
    private readonly hash: Hash,
  ) {
    super();
  }

  override _transform(chunk: Buffer, _enc: BufferEncoding, done: TransformCallback): void {
    this.count += chunk.length;
    if (this.count > this.length) return done(new ChunkBodyError('long'));
    this.hash.update(chunk);
    done(null, chunk);
  }

  override _flush(done: TransformCallback): void {
    done(this.count === this.length ? null : new ChunkBodyError('short'));
  }
}

/**
 * Writes one chunk of `length` bytes from `body` at `start` (the part file's end), feeding `hash`. The
 * whole chunk must arrive within `stallMs`; on any failure the file is cut back to `start` and the error
 * says why (ChunkBodyError), so the caller can answer and leave received_bytes as it was. The request
 * stream itself is only detached, never destroyed, so a stalled client still gets its answer.
 */
export async function appendChunk(opts: { file: string; start: number; length: number; body: Readable; hash: Hash; stallMs: number }): Promise<void> {
  await mkdir(path.dirname(opts.file), { recursive: true });
  await (await open(opts.file, 'a')).close();
  await truncate(opts.file, opts.start);
  const { body } = opts;
  const meter = new ChunkMeter(opts.length, opts.hash);
  const fail = (failure: ChunkFailure) => {
    body.unpipe(meter);
    meter.destroy(new ChunkBodyError(failure));
  };
  const stall = setTimeout(() => fail('stalled'), opts.stallMs);
  const dropped = () => fail('dropped');
  const closed = () => {
    if (!body.readableEnded) fail('dropped');
  };
  body.once('error', dropped);
  body.once('close', closed);
  body.pipe(meter);
  try {
    await pipeline(meter, createWriteStream(opts.file, { flags: 'r+', start: opts.start }));
  } catch (e) {
    await truncate(opts.file, opts.start).catch(() => {});
    throw e;
  } finally {
    clearTimeout(stall);
    body.off('error', dropped);
    body.off('close', closed);
  }
}
