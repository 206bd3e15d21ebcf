import { createHash } from 'node:crypto';
import { createReadStream, createWriteStream } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { Transform, type Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { Kysely } from 'kysely';
import type { DB } from '../../db/types.js';
import type { BlobStore } from '../blobs/index.js';
import { createFileFromBlob, ingestBlob } from '../files.js';

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

/** The stream was longer than the purpose allows. */
export class PurposeFileTooLarge extends Error {}

/**
 * Stores a stream as a file of a non-Drive purpose (what drive_upload_complete makes of such an upload),
 * for a door that receives the bytes in one request (the admin import page): written to a temporary file
 * while its SHA-256 is taken (never held in memory), refused past `maxBytes`, then ingested through the
 * one blob path and recorded as the owner's file. Returns the file.
 */
export async function storePurposeFile(
  db: Kysely<DB>,
  blobs: BlobStore,
  file: { purpose: string; ownerUserId: number; name: string; mimeType: string | null; body: Readable; maxBytes: number; now: Date },
): Promise<PurposeFile> {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'gh-purpose-'));
  const temp = path.join(dir, 'body');
  try {
    const hash = createHash('sha256');
    let size = 0;
    const counter = new Transform({
      transform(chunk: Buffer, _enc, done) {
        size += chunk.length;
        if (size > file.maxBytes) return done(new PurposeFileTooLarge(`The file is larger than ${file.maxBytes} bytes`));
        hash.update(chunk);
        done(null, chunk);
      },
    });
    await pipeline(file.body, counter, createWriteStream(temp));
    const sha256 = hash.digest('hex');
    const fileId = await db.transaction().execute(async (trx) => {
      const blobId = await ingestBlob(trx, blobs, { sha256, sizeBytes: size, mimeType: file.mimeType, time: file.now }, () => blobs.put(sha256, createReadStream(temp), size));
      return createFileFromBlob(trx, { ownerUserId: file.ownerUserId, source: file.purpose, name: file.name, folderId: null, blobId, sizeBytes: size, mimeType: file.mimeType, time: file.now });
    });
    return (await findPurposeFile(db, file.purpose, fileId, file.ownerUserId))!;
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}
