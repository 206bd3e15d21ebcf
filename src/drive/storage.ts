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

const opened = new WeakMap<Config, DriveStorage>();

/** The storage the configuration names, opened once per configuration (one S3 client per process). */
export function driveStorageFor(config: Config): DriveStorage {
  let storage = opened.get(config);
  if (!storage) {
    const uploadsDir = path.join(config.dataDir, 'uploads');
    let holder: LeaseHolder | null = null;
    storage = {
      blobs: openBlobStore(config.blobStore, config.dataDir),
      uploadsDir,
      // Made on first use (the first chunk), so a command that only reads never writes the node id.
      get leaseHolder() {
        holder ??= newLeaseHolder(uploadsDir);
        return holder;
      },
      staging: config.blobStore.driver === 's3' ? new S3PartStaging(config.blobStore) : null,
    };
    opened.set(config, storage);
  }
  return storage;
}

let active: DriveStorage | null = null;

/**
 * Makes the storage the one actions use. Actions receive no configuration; the app installs its storage
 * when it registers the upload endpoints (one app per process, like the feature registry).
 */
export function installDriveStorage(storage: DriveStorage): void {
  active = storage;
}

export function activeDriveStorage(): DriveStorage {
  if (!active) throw new Error('Drive storage is not installed (the upload surface installs it)');
  return active;
}
