import type { Readable } from 'node:stream';

/** An inclusive byte range, as in HTTP Range. */
export interface ByteRange {
  start: number;
  end: number;
}

/**
 * Where blob bytes live (DESIGN 9). Content addressed: a blob's key derives from its SHA-256, so putting
 * the same content twice stores it once. Which rows reference a blob is the database's business
 * (fbb_file_blobs); a store only keeps bytes.
 */
export interface BlobStore {
  /** The driver's name, recorded on each blob row ('fs', 's3'). */
  readonly driver: string;
  /** Stores exactly `size` bytes from the stream under the content's key; never leaves a partial blob under it. */
  put(sha256: string, body: Readable, size: number): Promise<{ key: string }>;
  /**
   * Stores the local file at `path` (whose content has that SHA-256 and size). The file is left where it
   * is (the `fs` driver hard-links it); the caller removes it once the referencing rows are written.
   */
  putFile(sha256: string, path: string, size: number): Promise<{ key: string }>;
  /** The blob's bytes, or the inclusive range of them. */
  get(key: string, range?: ByteRange): Promise<Readable>;
  /** Removes the blob; removing a missing blob is not an error. */
  delete(key: string): Promise<void>;
  stat(key: string): Promise<{ size: number } | null>;
}

export function assertSha256(sha256: string): void {
  if (!/^[0-9a-f]{64}$/.test(sha256)) throw new Error('a blob key needs a lowercase hex SHA-256');
}
