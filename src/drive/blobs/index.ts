import path from 'node:path';
import type { BlobStoreConfig } from '../../config.js';
import { FsBlobStore } from './fs.js';
import { S3BlobStore } from './s3.js';
import type { BlobStore } from './store.js';

export type { BlobStore, ByteRange } from './store.js';

/** The store the environment names (DESIGN 9): `fs` under DATA_DIR/blobs unless BLOB_STORE=s3. */
export function openBlobStore(config: BlobStoreConfig, dataDir: string): BlobStore {
  if (config.driver === 's3') return new S3BlobStore(config);
  return new FsBlobStore(path.join(dataDir, 'blobs'));
}
