import type { Readable } from 'node:stream';
import type { Kysely } from 'kysely';
import type { DB } from '../../db/types.js';
import type { BlobStore } from '../blobs/index.js';

/** A file a non-Drive upload purpose made (fil_source is the purpose's name), as its consumer reads it. */
export interface PurposeFile {
  fileId: number;
  name: string | null;
  sizeBytes: number;
  storageKey: string;
}

/** The live file of that purpose, owned by `ownerUserId`; undefined when there is none. */
export async function findPurposeFile(db: Kysely<DB>, purpose: string, fileId: number, ownerUserId: number): Promise<PurposeFile | undefined> {
  const row = await db
    .selectFrom('fil_files')
    .innerJoin('fbb_file_blobs', 'fbb_file_blob_id', 'fil_fbb_file_blob_id')
    .select(['fil_file_id', 'fil_name', 'fil_size_bytes', 'fbb_storage_key'])
    .where('fil_file_id', '=', fileId)
    .where('fil_usr_user_id', '=', ownerUserId)
    .where('fil_source', '=', purpose)
    .where('fil_delete_time', 'is', null)
    .executeTakeFirst();
  return row ? { fileId: Number(row.fil_file_id), name: row.fil_name, sizeBytes: Number(row.fil_size_bytes), storageKey: row.fbb_storage_key } : undefined;
}

/** The file's bytes as a stream (never read whole). */
export function openPurposeFile(blobs: BlobStore, file: PurposeFile): Promise<Readable> {
  return blobs.get(file.storageKey);
}
