import { DeleteObjectsCommand, GetObjectCommand, ListObjectsV2Command, PutObjectCommand, type S3Client } from '@aws-sdk/client-s3';
import { createReadStream, createWriteStream } from 'node:fs';
import { mkdir, open, truncate } from 'node:fs/promises';
import path from 'node:path';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { s3ClientFor, type S3BlobStoreOptions } from '../blobs/s3.js';

/**
 * A pending upload's chunks where every node can read them. Part files live on one node's disk; behind a
 * load balancer the next chunk (or the completion) may reach another node, which then fetches the chunks
 * it lacks from here. Each chunk is one object, `uploads/<part name>/<start offset>`, written before
 * received_bytes is recorded, so every recorded byte is staged.
 */
export interface PartStaging {
  /** Stages bytes [start, start + length) of the local part file. */
  stage(partName: string, file: string, start: number, length: number): Promise<void>;
  /**
   * Extends the local part file (now `from` bytes long) with staged chunks, in order, up to `upTo` bytes;
   * resolves with its new length (short of `upTo` when a chunk is missing).
   */
  restore(partName: string, file: string, from: number, upTo: number): Promise<number>;
  /** Removes every staged chunk of the upload. */
  remove(partName: string): Promise<void>;
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

  async stage(partName: string, file: string, start: number, length: number): Promise<void> {
    const key = `${this.prefix(partName)}${String(start).padStart(OFFSET_DIGITS, '0')}`;
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

  async restore(partName: string, file: string, from: number, upTo: number): Promise<number> {
    if (from >= upTo) return from;
    const chunks = await this.staged(partName);
    await mkdir(path.dirname(file), { recursive: true });
    await (await open(file, 'a')).close();
    await truncate(file, from);
    let offset = from;
    while (offset < upTo) {
      const chunk = chunks.get(offset);
      if (!chunk || chunk.size === 0) break;
      const got = await this.client.send(new GetObjectCommand({ Bucket: this.bucket, Key: chunk.key }));
      if (!(got.Body instanceof Readable)) throw new Error('the S3 client returned no stream');
      try {
        await pipeline(got.Body, createWriteStream(file, { flags: 'r+', start: offset }));
      } catch (e) {
        await truncate(file, offset).catch(() => {});
        throw e;
      }
      offset += chunk.size;
    }
    return offset;
  }

  async remove(partName: string): Promise<void> {
    const keys = [...(await this.staged(partName)).values()].map((c) => ({ Key: c.key }));
    for (let i = 0; i < keys.length; i += 1000) {
      await this.client.send(new DeleteObjectsCommand({ Bucket: this.bucket, Delete: { Objects: keys.slice(i, i + 1000), Quiet: true } }));
    }
  }
}
