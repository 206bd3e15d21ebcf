import { createHash, randomBytes } from 'node:crypto';
import { createReadStream, createWriteStream } from 'node:fs';
import { link, mkdir, open, rename, stat, unlink } from 'node:fs/promises';
import path from 'node:path';
import { Readable, Transform, type TransformCallback } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { assertSha256, type BlobStore, type ByteRange } from './store.js';

const KEY_RE = /^[0-9a-f]{2}\/[0-9a-f]{2}\/[0-9a-f]{64}$/;

/**
 * Checks a blob's bytes as they pass: exactly `size` of them, with that SHA-256. A stream that says
 * otherwise fails, so the writer never commits it under the content's name.
 */
export class ContentCheck extends Transform {
  private readonly hash = createHash('sha256');
  private count = 0;

  constructor(
    private readonly sha256: string,
    private readonly size: number,
  ) {
    super();
  }

  override _transform(chunk: Buffer, _enc: BufferEncoding, done: TransformCallback): void {
    this.count += chunk.length;
    if (this.count > this.size) return done(new Error(`blob is longer than its declared ${this.size} bytes`));
    this.hash.update(chunk);
    done(null, chunk);
  }

  override _flush(done: TransformCallback): void {
    if (this.count !== this.size) return done(new Error(`blob has ${this.count} bytes, not its declared ${this.size}`));
    if (this.hash.digest('hex') !== this.sha256) return done(new Error('blob content does not match its sha256'));
    done();
  }
}

async function fsyncPath(p: string, flags = 'r'): Promise<void> {
  const handle = await open(p, flags);
  try {
    await handle.sync();
  } finally {
    await handle.close();
  }
}

/**
 * The default driver: `root/ab/cd/<sha256>`. A blob is written to a temporary file in `root/tmp`,
 * fsynced and renamed into place (and its directory fsynced), so a crash never leaves a partial blob
 * under its name.
 */
export class FsBlobStore implements BlobStore {
  readonly driver = 'fs';

  constructor(readonly root: string) {}

  private keyOf(sha256: string): string {
    assertSha256(sha256);
    return `${sha256.slice(0, 2)}/${sha256.slice(2, 4)}/${sha256}`;
  }

  /** The key's file; keys are only ever ours, but one from the database is still checked. */
  pathOf(key: string): string {
    if (!KEY_RE.test(key)) throw new Error('not a blob key of the fs store');
    return path.join(this.root, key);
  }

  private async tempPath(): Promise<string> {
    const dir = path.join(this.root, 'tmp');
    await mkdir(dir, { recursive: true });
    return path.join(dir, `${randomBytes(12).toString('hex')}.part`);
  }

  private async place(from: string, key: string): Promise<void> {
    const to = this.pathOf(key);
    await mkdir(path.dirname(to), { recursive: true });
    await rename(from, to);
    await fsyncPath(path.dirname(to));
  }

  async put(sha256: string, body: Readable, size: number): Promise<{ key: string }> {
    const key = this.keyOf(sha256);
    const temp = await this.tempPath();
    try {
      await pipeline(body, new ContentCheck(sha256, size), createWriteStream(temp, { flags: 'wx' }));
      await fsyncPath(temp, 'r+');
      await this.place(temp, key);
    } catch (e) {
      await unlink(temp).catch(() => {});
      throw e;
    }
    return { key };
  }

  /**
   * Hard-links the file under the content's name (no copy, and the caller's file stays until it removes
   * it, so a completion whose transaction rolls back can run again). The content is already there when
   * another upload of it won the race: that blob is the same bytes.
   */
  async putFile(sha256: string, file: string, size: number): Promise<{ key: string }> {
    const key = this.keyOf(sha256);
    const found = await stat(file);
    if (found.size !== size) throw new Error(`file has ${found.size} bytes, not ${size}`);
    await fsyncPath(file, 'r+');
    const to = this.pathOf(key);
    await mkdir(path.dirname(to), { recursive: true });
    try {
      await link(file, to);
    } catch (e) {
      const code = (e as NodeJS.ErrnoException).code;
      if (code === 'EEXIST' && (await this.stat(key))?.size === size) return { key };
      // Another filesystem (or one without hard links): copy instead; put checks and fsyncs the copy.
      if (code === 'EXDEV' || code === 'EPERM' || code === 'ENOTSUP') return this.put(sha256, createReadStream(file), size);
      if (code !== 'EEXIST') throw e;
      // A wrong-sized file under the name (never written by us): replace it through a checked copy.
      return this.put(sha256, createReadStream(file), size);
    }
    await fsyncPath(path.dirname(to));
    return { key };
  }

  async get(key: string, range?: ByteRange): Promise<Readable> {
    // Opened here, so a missing blob fails this call rather than the stream later.
    const handle = await open(this.pathOf(key), 'r');
    return handle.createReadStream(range ? { start: range.start, end: range.end } : {});
  }

  async delete(key: string): Promise<void> {
    try {
      await unlink(this.pathOf(key));
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== 'ENOENT') throw e;
    }
  }

  async stat(key: string): Promise<{ size: number } | null> {
    try {
      return { size: (await stat(this.pathOf(key))).size };
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code === 'ENOENT') return null;
      throw e;
    }
  }
}
