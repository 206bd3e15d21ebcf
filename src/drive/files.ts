import { sql, type Kysely } from 'kysely';
import type { DB } from '../db/types.js';
import { formatTimestamp } from '../lib/time.js';
import type { SealedReader } from '../accounts/vault/sealed.js';
import type { BlobStore } from './blobs/store.js';
import { openSealedName } from './sealed-files.js';

// The one path by which Drive rows reference blob bytes. Every row that references a blob (a file's
// current content, a kept version) holds one count on fbb_refcount, taken and given back in the same
// transaction as the row. Bytes are removed only after that transaction commits, and only while the
// count is still 0 (sweepBlobs), so a concurrent upload of the same content never loses its bytes.

/** The source of Drive files; other upload purposes record their own name. */
export const DRIVE_SOURCE = 'drive';

/**
 * Finds or makes the blob row for this content in the current driver and makes sure the store holds its
 * bytes, writing them with `write` when it does not. The row is locked by this transaction until it
 * commits, so it cannot be swept in between; the caller then references it (createFileFromBlob,
 * addVersion), which takes the count.
 */
export async function ingestBlob(
  trx: Kysely<DB>,
  store: BlobStore,
  content: { sha256: string; sizeBytes: number; mimeType: string | null; time: Date },
  write: () => Promise<{ key: string }>,
): Promise<number> {
  const row = await trx
    .insertInto('fbb_file_blobs')
    .values({
      fbb_sha256: content.sha256,
      fbb_size_bytes: content.sizeBytes,
      fbb_mime_type: content.mimeType,
      fbb_driver: store.driver,
      fbb_storage_key: '',
      fbb_refcount: 0,
      fbb_create_time: content.time,
      fbb_update_time: content.time,
    })
    .onConflict((oc) => oc.columns(['fbb_driver', 'fbb_sha256', 'fbb_size_bytes']).doUpdateSet({ fbb_update_time: content.time }))
    .returning(['fbb_file_blob_id', 'fbb_storage_key', 'fbb_refcount'])
    .executeTakeFirstOrThrow();
  // A referenced blob's bytes are in the store. An unreferenced one's may be gone (a sweep that removed
  // the bytes and then failed to commit), so look before trusting it.
  const stored =
    row.fbb_storage_key !== '' && (row.fbb_refcount > 0 || (await store.stat(row.fbb_storage_key))?.size === content.sizeBytes);
  if (!stored) {
    const { key } = await write();
    await trx.updateTable('fbb_file_blobs').set({ fbb_storage_key: key }).where('fbb_file_blob_id', '=', row.fbb_file_blob_id).execute();
  }
  return row.fbb_file_blob_id;
}

/** Takes one reference on a blob. False when the blob is gone (swept): the caller must not use it. */
export async function acquireBlob(trx: Kysely<DB>, blobId: number): Promise<boolean> {
  const result = await trx
    .updateTable('fbb_file_blobs')
    .set({ fbb_refcount: sql`fbb_refcount + 1` })
    .where('fbb_file_blob_id', '=', blobId)
    .executeTakeFirst();
  return Number(result.numUpdatedRows) === 1;
}

/**
 * Gives back one reference. Returns true when it was the last: after the transaction commits, pass the
 * id to sweepBlobs to remove the bytes (never before, or a rollback would leave rows without bytes).
 */
export async function releaseBlob(trx: Kysely<DB>, blobId: number): Promise<boolean> {
  const row = await trx
    .updateTable('fbb_file_blobs')
    .set({ fbb_refcount: sql`fbb_refcount - 1` })
    .where('fbb_file_blob_id', '=', blobId)
    .returning('fbb_refcount')
    .executeTakeFirstOrThrow();
  return row.fbb_refcount === 0;
}

/**
 * Removes blobs still unreferenced: the row and then the bytes, in one transaction holding the row, so an
 * upload of the same content either waits and makes a fresh row, or found the row first and keeps it.
 * Failures are left for the next sweep (an unreferenced row stays behind). Returns how many went.
 */
export async function sweepBlobs(db: Kysely<DB>, store: BlobStore, blobIds: Iterable<number>): Promise<number> {
  let removed = 0;
  for (const blobId of new Set(blobIds)) {
    try {
      const gone = await db.transaction().execute(async (trx) => {
        const row = await trx
          .deleteFrom('fbb_file_blobs')
          .where('fbb_file_blob_id', '=', blobId)
          .where('fbb_refcount', '=', 0)
          .returning(['fbb_storage_key', 'fbb_driver'])
          .executeTakeFirst();
        if (!row) return false;
        if (row.fbb_driver !== store.driver) throw new Error(`blob ${blobId} lives in the '${row.fbb_driver}' store`);
        if (row.fbb_storage_key !== '') await store.delete(row.fbb_storage_key);
        return true;
      });
      if (gone) removed++;
    } catch {
      // Kept for the next sweep.
    }
  }
  return removed;
}

/** Unreferenced blobs left behind (a crash between commit and sweep), oldest first. */
export async function unreferencedBlobIds(db: Kysely<DB>, olderThan: Date, limit: number): Promise<number[]> {
  const rows = await db
    .selectFrom('fbb_file_blobs')
    .select('fbb_file_blob_id')
    .where('fbb_refcount', '=', 0)
    .where('fbb_update_time', '<', olderThan)
    .orderBy('fbb_update_time')
    .limit(limit)
    .execute();
  return rows.map((r) => r.fbb_file_blob_id);
}

export interface NewFile {
  ownerUserId: number;
  /** DRIVE_SOURCE, or the upload purpose's name. */
  source: string;
  name: string;
  folderId: number | null;
  blobId: number;
  sizeBytes: number;
  mimeType: string | null;
  time: Date;
}

/** Makes a file whose current content is the blob, taking the blob's reference. Returns the file id. */
export async function createFileFromBlob(trx: Kysely<DB>, file: NewFile): Promise<number> {
  if (!(await acquireBlob(trx, file.blobId))) throw new Error(`blob ${file.blobId} is gone`);
  const row = await trx
    .insertInto('fil_files')
    .values({
      fil_usr_user_id: file.ownerUserId,
      fil_source: file.source,
      fil_name: file.name,
      fil_fol_folder_id: file.folderId,
      fil_fbb_file_blob_id: file.blobId,
      fil_size_bytes: file.sizeBytes,
      fil_mime_type: file.mimeType,
      fil_create_time: file.time,
      fil_update_time: file.time,
    })
    .returning('fil_file_id')
    .executeTakeFirstOrThrow();
  return row.fil_file_id;
}

/**
 * Makes the blob the file's current content; the content it had becomes a kept version (the version row
 * takes over the file's reference on the old blob). Prune afterwards with pruneVersions.
 */
export async function addVersion(
  trx: Kysely<DB>,
  change: { fileId: number; blobId: number; sizeBytes: number; mimeType: string | null; time: Date },
): Promise<void> {
  const current = await trx
    .selectFrom('fil_files')
    .select(['fil_fbb_file_blob_id', 'fil_name', 'fil_size_bytes', 'fil_mime_type', 'fil_update_time'])
    .where('fil_file_id', '=', change.fileId)
    .forUpdate()
    .executeTakeFirstOrThrow();
  if (!(await acquireBlob(trx, change.blobId))) throw new Error(`blob ${change.blobId} is gone`);
  if (current.fil_fbb_file_blob_id !== null) {
    await trx
      .insertInto('fvr_file_versions')
      .values({
        fvr_fil_file_id: change.fileId,
        fvr_fbb_file_blob_id: current.fil_fbb_file_blob_id,
        fvr_name: current.fil_name,
        fvr_size_bytes: current.fil_size_bytes ?? 0,
        fvr_mime_type: current.fil_mime_type,
        fvr_content_time: current.fil_update_time,
        fvr_create_time: change.time,
      })
      .execute();
  }
  await trx
    .updateTable('fil_files')
    .set({
      fil_fbb_file_blob_id: change.blobId,
      fil_size_bytes: change.sizeBytes,
      fil_mime_type: change.mimeType,
      fil_update_time: change.time,
    })
    .where('fil_file_id', '=', change.fileId)
    .execute();
}

/**
 * Keeps the newest `keep` versions of the file and deletes the rest, giving back their references.
 * Returns the blob ids whose last reference went (sweep them after commit).
 */
export async function pruneVersions(trx: Kysely<DB>, fileId: number, keep: number): Promise<number[]> {
  const doomed = await trx
    .selectFrom('fvr_file_versions')
    .select(['fvr_file_version_id', 'fvr_fbb_file_blob_id'])
    .where('fvr_fil_file_id', '=', fileId)
    .orderBy('fvr_file_version_id', 'desc')
    .offset(Math.max(0, keep))
    .limit(1_000_000)
    .execute();
  return deleteVersions(trx, doomed);
}

/** Deletes version rows, giving back their references; returns the blob ids whose last reference went. */
export async function deleteVersions(
  trx: Kysely<DB>,
  versions: { fvr_file_version_id: number; fvr_fbb_file_blob_id: number }[],
): Promise<number[]> {
  if (versions.length === 0) return [];
  await trx
    .deleteFrom('fvr_file_versions')
    .where(
      'fvr_file_version_id',
      'in',
      versions.map((v) => v.fvr_file_version_id),
    )
    .execute();
  const orphaned: number[] = [];
  for (const v of versions) if (await releaseBlob(trx, v.fvr_fbb_file_blob_id)) orphaned.push(v.fvr_fbb_file_blob_id);
  return orphaned;
}

/**
 * A Drive file as actions return it (DESIGN 9). A sealed file (in a sealed folder, DESIGN 10) has `sealed`
 * true and `content_locked` set: while its owner's vault is not open to the reader, name is null and
 * content_locked true. Its sha256 is always null (the stored blob is ciphertext; the plaintext hash is not kept).
 */
export interface DriveFile {
  file_id: number;
  name: string | null;
  folder_id: number | null;
  size_bytes: number;
  mime_type: string | null;
  sha256: string | null;
  version_count: number;
  is_trashed: boolean;
  owner_user_id: number;
  create_time: string;
  update_time: string;
  /** Present (true) on sealed files only. */
  sealed?: true;
  content_locked?: boolean;
}

/**
 * Drive files with what their output needs (the blob's sha256, the number of kept versions); add where
 * clauses and map rows with toDriveFile.
 */
export function selectDriveFiles(db: Kysely<DB>) {
  return db
    .selectFrom('fil_files')
    .leftJoin('fbb_file_blobs', 'fbb_file_blob_id', 'fil_fbb_file_blob_id')
    .select([
      'fil_file_id',
      'fil_name',
      'fil_fol_folder_id',
      'fil_size_bytes',
      'fil_mime_type',
      'fil_is_trashed',
      'fil_usr_user_id',
      'fil_create_time',
      'fil_update_time',
      'fil_fbb_file_blob_id',
      'fil_sealed_key',
      'fil_sealed_name',
      'fil_sealed_mime',
      'fbb_sha256',
      (eb) =>
        eb
          .selectFrom('fvr_file_versions')
          .select(eb.fn.countAll<number>().as('n'))
          .whereRef('fvr_fil_file_id', '=', 'fil_file_id')
          .as('version_count'),
    ])
    .where('fil_source', '=', DRIVE_SOURCE)
    .where('fil_delete_time', 'is', null);
}

export type DriveFileRow = Awaited<ReturnType<ReturnType<typeof selectDriveFiles>['executeTakeFirstOrThrow']>>;

/** The file as anyone reads it without opening sealed content: a sealed file's name and MIME type null, content_locked true. */
export function toDriveFile(row: DriveFileRow): DriveFile {
  const sealed = row.fil_sealed_key !== null;
  return {
    file_id: row.fil_file_id,
    name: sealed ? null : (row.fil_name ?? ''),
    folder_id: row.fil_fol_folder_id,
    size_bytes: row.fil_size_bytes ?? 0,
    mime_type: sealed ? null : row.fil_mime_type,
    sha256: row.fbb_sha256 === null || sealed ? null : row.fbb_sha256.trim(),
    version_count: Number(row.version_count ?? 0),
    is_trashed: row.fil_is_trashed,
    owner_user_id: row.fil_usr_user_id ?? 0,
    create_time: formatTimestamp(row.fil_create_time),
    update_time: formatTimestamp(row.fil_update_time),
    ...(sealed ? { sealed: true, content_locked: true } : {}),
  };
}

/** The files as this reader sees them: sealed names opened where the reader's vault window allows. */
export async function driveFilesFor(rows: DriveFileRow[], reader: SealedReader | null): Promise<DriveFile[]> {
  const out: DriveFile[] = [];
  for (const row of rows) {
    const file = toDriveFile(row);
    if (file.sealed) Object.assign(file, await openSealedName(row, reader, row.fil_mime_type));
    out.push(file);
  }
  return out;
}

export async function loadDriveFile(db: Kysely<DB>, fileId: number, reader: SealedReader | null): Promise<DriveFile | null> {
  const row = await selectDriveFiles(db).where('fil_file_id', '=', fileId).executeTakeFirst();
  return row ? (await driveFilesFor([row], reader))[0]! : null;
}

/** The owners whose sealed content these files show opened (an answer holding them is stored sealed). */
export function openedSealedOwners(files: DriveFile[]): number[] {
  return [...new Set(files.filter((f) => f.sealed && f.content_locked === false).map((f) => f.owner_user_id))];
}
