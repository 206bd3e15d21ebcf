import type { Kysely } from 'kysely';
import type { DB } from '../db/types.js';
import { formatTimestamp } from '../lib/time.js';

/** A kept earlier content of a file. */
export interface DriveVersion {
  version_id: number;
  name: string | null;
  size_bytes: number;
  mime_type: string | null;
  /** Null for a sealed file: its stored blobs are ciphertext. */
  sha256: string | null;
  /** When this content became the file's content. */
  create_time: string;
  /** When newer content replaced it. */
  replaced_time: string;
}

/** The file's kept versions, newest first. */
export async function versionsOf(db: Kysely<DB>, fileId: number, sealed: boolean): Promise<DriveVersion[]> {
  const rows = await db
    .selectFrom('fvr_file_versions')
    .innerJoin('fbb_file_blobs', 'fbb_file_blob_id', 'fvr_fbb_file_blob_id')
    .select(['fvr_file_version_id', 'fvr_name', 'fvr_size_bytes', 'fvr_mime_type', 'fbb_sha256', 'fvr_content_time', 'fvr_create_time'])
    .where('fvr_fil_file_id', '=', fileId)
    .orderBy('fvr_file_version_id', 'desc')
    .execute();
  return rows.map((r) => ({
    version_id: r.fvr_file_version_id,
    name: r.fvr_name,
    size_bytes: r.fvr_size_bytes,
    // A sealed file's MIME type is sealed (issue 35): versions keep none readable.
    mime_type: sealed ? null : r.fvr_mime_type,
    sha256: sealed ? null : r.fbb_sha256.trim(),
    create_time: formatTimestamp(r.fvr_content_time),
    replaced_time: formatTimestamp(r.fvr_create_time),
  }));
}
