import { createHash, type Hash } from 'node:crypto';
import { constants, createReadStream } from 'node:fs';
import { mkdir, open, stat, unlink, type FileHandle } from 'node:fs/promises';
import path from 'node:path';
import type { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';

// Part files: the bytes of a pending upload, appended chunk by chunk in DATA_DIR/uploads. A chunk is
// streamed from the request to the file through the hash, never held whole; a chunk that fails (short,
// long, stalled, dropped) is cut back off the file, so the file always ends at received_bytes.

const PART_NAME_RE = /^[0-9a-f]{32}\.part$/;
/** Completion's encrypted copy of a part (sealed-upload.ts), there only while a completion runs. */
const SEALED_OUT_SUFFIX = '.sealed';

export function partPath(uploadsDir: string, partName: string): string {
  if (!PART_NAME_RE.test(partName)) throw new Error('not a part file name');
  return path.join(uploadsDir, partName);
}

export function isPartName(name: string): boolean {
  return PART_NAME_RE.test(name);
}

/** The completion's sealed copy of a part file. */
export function sealedOutPath(partFile: string): string {
  return `${partFile}${SEALED_OUT_SUFFIX}`;
}

/** The part a file in the upload directory belongs to (its part file or the completion's copy), or null. */
export function partNameOf(fileName: string): string | null {
  if (PART_NAME_RE.test(fileName)) return fileName;
  if (fileName.endsWith(SEALED_OUT_SUFFIX) && PART_NAME_RE.test(fileName.slice(0, -SEALED_OUT_SUFFIX.length))) return fileName.slice(0, -SEALED_OUT_SUFFIX.length);
  return null;
}

/** Where a part file stands: its plaintext bytes held (in whole chunks) and the bytes stored for them. */
export interface Held {
  plain: number;
  stored: number;
}

/** How a part file stores what it holds: as is (plain uploads) or as sealed records (sealed-parts.ts). */
export interface PartLayout {
  /** The longest prefix of the file made of whole chunks and at most `upTo` plaintext bytes. */
  held(file: string, upTo: number): Promise<Held>;
  /** The plaintext length of the chunk stored at [storedStart, storedStart + storedLength) from plainStart; null when it is not one. */
  plainLength(file: string, storedStart: number, storedLength: number, plainStart: number): Promise<number | null>;
}

export const plainLayout: PartLayout = {
  async held(file, upTo) {
    const n = Math.min(await partSize(file), upTo);
    return { plain: n, stored: n };
  },
  plainLength: async (_file, _storedStart, storedLength) => storedLength,
};

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

/** Turns a chunk's plaintext into the bytes stored for it (a sealed upload's record; see sealed-parts.ts). */
export interface ChunkEncoder {
  /** Bytes written before the first piece. */
  readonly head: Buffer[];
  update(plain: Buffer): Buffer[];
  final(): Buffer[];
}

/** 'lost': the chunk's lease went (the holder could not renew it), so its bytes are not wanted. */
export type ChunkFailure = 'short' | 'long' | 'stalled' | 'dropped' | 'lost';

export class ChunkBodyError extends Error {
  constructor(readonly failure: ChunkFailure) {
    super(`chunk body ${failure}`);
  }
}

/**
 * Bytes a chunk may hold in memory while the previous write is on the disk: above it the request is
 * paused (backpressure to the client through TCP). One batch being written plus one gathering, so an
 * upload holds at most about twice this (plus one socket read) at any time.
 */
export const CHUNK_WRITE_BATCH_BYTES = 1024 * 1024;

/** Writes all of `buffers` at `position` (writev writes fewer bytes when it hits IOV_MAX). */
async function writeAll(handle: FileHandle, buffers: Buffer[], position: number): Promise<void> {
  let rest = buffers;
  while (rest.length > 0) {
    let { bytesWritten } = await handle.writev(rest, position);
    position += bytesWritten;
    let i = 0;
    while (i < rest.length && bytesWritten >= rest[i]!.length) bytesWritten -= rest[i++]!.length;
    rest = rest.slice(i);
    if (rest.length > 0 && bytesWritten > 0) rest[0] = rest[0]!.subarray(bytesWritten);
  }
}

/**
 * Streams exactly `length` bytes of `body` to `handle` from `position`, through `hash` (when given) and
 * the encoder (when given: what is written is its output). Each socket read is hashed as it arrives (on
 * this thread) while the batch before it is being written (on the libuv pool), so hashing, receiving and
 * writing overlap; writes are batched (one writev per batch) rather than one per socket read. Settles
 * only once no write is in flight, so the caller can cut the file back. An abort of `signal` fails it.
 */
function receiveChunk(
  handle: FileHandle,
  o: { position: number; length: number; body: Readable; hash: Hash | null; encoder: ChunkEncoder | null; stallMs: number; signal?: AbortSignal },
): Promise<void> {
  const { body, hash, length, encoder } = o;
  return new Promise<void>((resolve, reject) => {
    let count = 0;
    let position = o.position;
    let gathering: Buffer[] = [];
    let gatheredBytes = 0;
    let writing = false;
    let ended = false;
    let failure: Error | null = null;

    const gather = (buffers: Buffer[]) => {
      for (const b of buffers) {
        if (b.length === 0) continue;
        gathering.push(b);
        gatheredBytes += b.length;
      }
    };
    const detach = () => {
      clearTimeout(stall);
      o.signal?.removeEventListener('abort', onAbort);
      body.off('data', onData);
      body.off('end', onEnd);
      body.off('error', onError);
      body.off('close', onClose);
    };
    const settle = () => (failure ? reject(failure) : resolve());
    // The request stream is only detached and paused, never destroyed, so the client still gets its answer.
    const fail = (e: Error) => {
      if (failure) return;
      failure = e;
      detach();
      body.pause();
      gathering = [];
      if (!writing) settle();
    };
    const flush = () => {
      if (writing || failure) return;
      if (gathering.length === 0) {
        if (ended) {
          detach();
          settle();
        }
        return;
      }
      const batch = gathering;
      const bytes = gatheredBytes;
      gathering = [];
      gatheredBytes = 0;
      writing = true;
      if (!ended) body.resume();
      writeAll(handle, batch, position).then(
        () => {
          writing = false;
          position += bytes;
          if (failure) settle();
          else flush();
        },
        (e: Error) => {
          writing = false;
          fail(e);
        },
      );
    };
    function onData(chunk: Buffer) {
      count += chunk.length;
      if (count > length) return fail(new ChunkBodyError('long'));
      hash?.update(chunk);
      gather(encoder ? encoder.update(chunk) : [chunk]);
      if (gatheredBytes >= CHUNK_WRITE_BATCH_BYTES) body.pause();
      flush();
    }
    function onEnd() {
      ended = true;
      if (count !== length) return fail(new ChunkBodyError('short'));
      if (encoder) gather(encoder.final());
      flush();
    }
    function onError() {
      fail(new ChunkBodyError('dropped'));
    }
    function onClose() {
      if (!body.readableEnded) fail(new ChunkBodyError('dropped'));
    }
    function onAbort() {
      fail(new ChunkBodyError('lost'));
    }
    const stall = setTimeout(() => fail(new ChunkBodyError('stalled')), o.stallMs);
    if (encoder) gather(encoder.head);
    o.signal?.addEventListener('abort', onAbort);
    body.on('data', onData);
    body.once('end', onEnd);
    body.once('error', onError);
    body.once('close', onClose);
    if (o.signal?.aborted) fail(new ChunkBodyError('lost'));
    else if (body.destroyed && !body.readableEnded) fail(new ChunkBodyError('dropped'));
  });
}

/**
 * Writes one chunk of `length` bytes from `body` at `start` (the part file's stored end: what follows is
 * cut off first), feeding `hash`; with an encoder, what is stored is its output (a sealed record). The
 * whole chunk must arrive within `stallMs`; on any failure the file is cut back to `start` and the error
 * says why (ChunkBodyError), so the caller can answer and leave received_bytes as it was. No fsync here:
 * completion fsyncs the whole part file before it becomes a blob, and a crash that loses acknowledged
 * bytes from the page cache leaves the file shorter than received_bytes, which the next chunk or
 * completion sees and lowers (the client resumes from there, DESIGN 9's 409 received_bytes answer).
 */
export async function appendChunk(opts: {
  file: string;
  start: number;
  length: number;
  body: Readable;
  hash: Hash | null;
  encoder?: ChunkEncoder | null;
  stallMs: number;
  signal?: AbortSignal;
}): Promise<void> {
  await mkdir(path.dirname(opts.file), { recursive: true });
  const handle = await open(opts.file, constants.O_WRONLY | constants.O_CREAT);
  try {
    await handle.truncate(opts.start);
    await receiveChunk(handle, {
      position: opts.start,
      length: opts.length,
      body: opts.body,
      hash: opts.hash,
      encoder: opts.encoder ?? null,
      stallMs: opts.stallMs,
      ...(opts.signal ? { signal: opts.signal } : {}),
    });
  } catch (e) {
    await handle.truncate(opts.start).catch(() => {});
    throw e;
  } finally {
    await handle.close();
  }
}
