import { DeleteObjectCommand, GetObjectCommand, HeadObjectCommand, S3Client, S3ServiceException, type S3ClientConfig } from '@aws-sdk/client-s3';
import { Upload } from '@aws-sdk/lib-storage';
import { createReadStream } from 'node:fs';
import { Readable } from 'node:stream';
import { ContentCheck } from './fs.js';
import { assertSha256, type BlobStore, type ByteRange } from './store.js';

export interface S3BlobStoreOptions {
  /** Any S3-compatible endpoint; AWS's own when absent. */
  endpoint?: string;
  bucket: string;
  region: string;
  /** Absent: the SDK's default credential chain. */
  accessKeyId?: string;
  secretAccessKey?: string;
  forcePathStyle: boolean;
}

/** Parts of 8 MiB, two in flight: an upload holds at most about 16 MiB in memory. */
const PART_BYTES = 8 * 1024 * 1024;
const PARTS_IN_FLIGHT = 2;

function isNotFound(e: unknown): boolean {
  return e instanceof S3ServiceException && (e.name === 'NotFound' || e.name === 'NoSuchKey' || e.$metadata.httpStatusCode === 404);
}

/** A client for the configured bucket's service; `extra` adds client settings (the part staging's checksum mode). */
export function s3ClientFor(opts: S3BlobStoreOptions, extra: Partial<S3ClientConfig> = {}): S3Client {
  return new S3Client({
    region: opts.region,
    forcePathStyle: opts.forcePathStyle,
    ...(opts.endpoint ? { endpoint: opts.endpoint } : {}),
    ...(opts.accessKeyId && opts.secretAccessKey ? { credentials: { accessKeyId: opts.accessKeyId, secretAccessKey: opts.secretAccessKey } } : {}),
    ...extra,
  });
}

/**
 * Blobs in an S3 bucket, `blobs/ab/cd/<sha256>`, so several nodes share one store. Large blobs go up as
 * multipart uploads (lib-storage's Upload); a stream that turns out short, long or of other content
 * fails the upload, which is then aborted, so no partial object appears under the content's key.
 */
export class S3BlobStore implements BlobStore {
  readonly driver = 's3';
  private readonly client: S3Client;
  private readonly bucket: string;

  constructor(opts: S3BlobStoreOptions) {
    this.bucket = opts.bucket;
    this.client = s3ClientFor(opts);
  }

  private keyOf(sha256: string): string {
    assertSha256(sha256);
    return `blobs/${sha256.slice(0, 2)}/${sha256.slice(2, 4)}/${sha256}`;
  }

  async put(sha256: string, body: Readable, size: number): Promise<{ key: string }> {
    const key = this.keyOf(sha256);
    const checked = body.pipe(new ContentCheck(sha256, size));
    body.on('error', (e) => checked.destroy(e));
    const upload = new Upload({
      client: this.client,
      params: { Bucket: this.bucket, Key: key, Body: checked, ContentType: 'application/octet-stream' },
      partSize: PART_BYTES,
      queueSize: PARTS_IN_FLIGHT,
      leavePartsOnError: false,
    });
    await upload.done();
    return { key };
  }

  putFile(sha256: string, file: string, size: number): Promise<{ key: string }> {
    return this.put(sha256, createReadStream(file), size);
  }

  async get(key: string, range?: ByteRange): Promise<Readable> {
    const out = await this.client.send(
      new GetObjectCommand({ Bucket: this.bucket, Key: key, ...(range ? { Range: `bytes=${range.start}-${range.end}` } : {}) }),
    );
    if (!(out.Body instanceof Readable)) throw new Error('the S3 client returned no stream');
    return out.Body;
  }

  async delete(key: string): Promise<void> {
    await this.client.send(new DeleteObjectCommand({ Bucket: this.bucket, Key: key }));
  }

  async stat(key: string): Promise<{ size: number } | null> {
    try {
      const head = await this.client.send(new HeadObjectCommand({ Bucket: this.bucket, Key: key }));
      return { size: head.ContentLength ?? 0 };
    } catch (e) {
      if (isNotFound(e)) return null;
      throw e;
    }
  }

  close(): void {
    this.client.destroy();
  }
}
