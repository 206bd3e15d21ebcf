import { DeleteObjectsCommand, GetObjectCommand, ListObjectsV2Command, PutObjectCommand, type S3Client } from '@aws-sdk/client-s3';
import { createReadStream, createWriteStream } from 'node:fs';
import { mkdir, open, truncate } from 'node:fs/promises';
import path from 'node:path';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { s3ClientFor, type S3BlobStoreOptions } from '../blobs/s3.js';
import { plainLayout, type Held, type PartLayout } from './parts.js';

/**
 * A pending upload's chunks where every node can read them. Part files live on one node's disk; behind a
 * load balancer the next chunk (or the completion) may reach another node, which then fetches the chunks
 * it lacks from here. Each chunk is one object, `uploads/<part name>/<plaintext start offset>`, holding the
 * bytes the part file stores for it (a sealed upload's encrypted record), written before received_bytes
 * is recorded, so every recorded byte is staged.
 */
export interface PartStaging {
  /** Stages the chunk from plaintext offset `plainStart`: the part file's stored bytes [storedStart, storedStart + storedLength). */
  stage(partName: string, file: string, chunk: { plainStart: number; storedStart: number; storedLength: number }): Promise<void>;
  /**
   * Extends the local part file (now holding `from`) with staged chunks, in order, up to `upTo` plaintext
   * bytes; resolves with what it then holds (short of `upTo` when a chunk is missing or not whole).
   */
  restore(partName: string, file: string, from: Held, upTo: number, layout?: PartLayout): Promise<Held>;
  /** Removes every staged chunk of the upload. */
  remove(partName: string): Promise<void>;
  /** The parts with staged chunks whose newest chunk was staged before `before`. */
  staleParts(before: Date): Promise<string[]>;
}

const OFFSET_DIGITS = 16;

export class S3PartStaging implements PartStaging {
  private readonly client: S3Client;
  private readonly bucket: string;

  constructor(opts: S3BlobStoreOptions) {
    this.bucket = opts.bucket;
    // A streamed body with a checksum trailer goes as aws-chunked framing, which not every
    // S3-compatible service understands; the object's length is given and checked instead.
    this.client = s3ClientFor(opts, { requestChecksumCalculation: 'WHEN_REQUIRED' });
  }

  private prefix(partName: string): string {
    return `uploads/${partName}/`;
  }

  async stage(partName: string, file: string, chunk: { plainStart: number; storedStart: number; storedLength: number }): Promise<void> {
    const { plainStart, storedStart: start, storedLength: length } = chunk;
    const key = `${this.prefix(partName)}${String(plainStart).padStart(OFFSET_DIGITS, '0')}`;
    const body = length === 0 ? Buffer.alloc(0) : createReadStream(file, { start, end: start + length - 1 });
    await this.client.send(new PutObjectCommand({ Bucket: this.bucket, Key: key, Body: body, ContentLength: length }));
  }

  private async staged(partName: string): Promise<Map<number, { key: string; size: number }>> {
    const out = new Map<number, { key: string; size: number }>();
    let token: string | undefined;
    do {
      const page = await this.client.send(new ListObjectsV2Command({ Bucket: this.bucket, Prefix: this.prefix(partName), ContinuationToken: token }));
      for (const o of page.Contents ?? []) {
        const start = Number(o.Key!.slice(this.prefix(partName).length));
        if (Number.isSafeInteger(start)) out.set(start, { key: o.Key!, size: o.Size ?? 0 });
      }
      token = page.IsTruncated ? page.NextContinuationToken : undefined;
    } while (token);
    return out;
  }

  async restore(partName: string, file: string, from: Held, upTo: number, layout: PartLayout = plainLayout): Promise<Held> {
    if (from.plain >= upTo) return from;
    const chunks = await this.staged(partName);
    await mkdir(path.dirname(file), { recursive: true });
    await (await open(file, 'a')).close();
    await truncate(file, from.stored);
    const at: Held = { ...from };
    while (at.plain < upTo) {
      const chunk = chunks.get(at.plain);
      if (!chunk || chunk.size === 0) break;
      const got = await this.client.send(new GetObjectCommand({ Bucket: this.bucket, Key: chunk.key }));
      if (!(got.Body instanceof Readable)) throw new Error('the S3 client returned no stream');
      try {
        await pipeline(got.Body, createWriteStream(file, { flags: 'r+', start: at.stored }));
      } catch (e) {
        await truncate(file, at.stored).catch(() => {});
        throw e;
      }
      const plain = await layout.plainLength(file, at.stored, chunk.size, at.plain);
      if (plain === null || plain === 0 || at.plain + plain > upTo) {
        await truncate(file, at.stored);
        break;
      }
      at.plain += plain;
      at.stored += chunk.size;
    }
    return at;
  }

  async staleParts(before: Date): Promise<string[]> {
    const newest = new Map<string, number>();
    let token: string | undefined;
    do {
      const page = await this.client.send(new ListObjectsV2Command({ Bucket: this.bucket, Prefix: 'uploads/', ContinuationToken: token }));
      for (const o of page.Contents ?? []) {
        const part = o.Key!.slice('uploads/'.length).split('/')[0]!;
        const time = o.LastModified?.getTime() ?? 0;
        newest.set(part, Math.max(newest.get(part) ?? 0, time));
      }
      token = page.IsTruncated ? page.NextContinuationToken : undefined;
    } while (token);
    return [...newest].filter(([, time]) => time < before.getTime()).map(([part]) => part);
  }

  async remove(partName: string): Promise<void> {
    const keys = [...(await this.staged(partName)).values()].map((c) => ({ Key: c.key }));
    for (let i = 0; i < keys.length; i += 1000) {
      await this.client.send(new DeleteObjectsCommand({ Bucket: this.bucket, Delete: { Objects: keys.slice(i, i + 1000), Quiet: true } }));
    }
  }
}
