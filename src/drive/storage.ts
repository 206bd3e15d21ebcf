import path from 'node:path';
import type { Config } from '../config.js';
import { openBlobStore, type BlobStore } from './blobs/index.js';
import { newLeaseHolder } from './uploads/lease-holder.js';
import type { LeaseHolder } from './uploads/pending.js';
import { S3PartStaging, type PartStaging } from './uploads/staging.js';

/** Where Drive keeps bytes: the blob store, and the local directory of pending uploads' part files. */
export interface DriveStorage {
  blobs: BlobStore;
  /** DATA_DIR/uploads: one part file per pending upload, named by fup_part_name. */
  uploadsDir: string;
  /** With a shared blob store (s3): chunks staged there, so any node can take the next chunk or complete. */
  staging: PartStaging | null;
  /** This process as a holder of chunk leases (DESIGN 9): the node (its DATA_DIR) and this boot of it. */
  leaseHolder: LeaseHolder;
}

/**
 * The storage the configuration names. The roof opens it once per app (one S3 client) and hands it to the
 * upload door, the actions (ActionContext.driveStorage), the pages and the tasks.
 */
export function openDriveStorage(config: Config): DriveStorage {
  const uploadsDir = path.join(config.dataDir, 'uploads');
  let holder: LeaseHolder | null = null;
  return {
    blobs: openBlobStore(config.blobStore, config.dataDir),
    uploadsDir,
    // Made on first use (the first chunk), so a command that only reads never writes the node id.
    get leaseHolder() {
      holder ??= newLeaseHolder(uploadsDir);
      return holder;
    },
    staging: config.blobStore.driver === 's3' ? new S3PartStaging(config.blobStore) : null,
  };
}
