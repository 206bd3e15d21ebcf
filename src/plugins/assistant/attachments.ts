import { Readable } from 'node:stream';
import type { Kysely } from 'kysely';
import type { Attachment } from '../../actions/define.js';
import type { DB } from '../../db/types.js';
import type { BlobStore } from '../../drive/blobs/index.js';
import { createFileFromBlob, ingestBlob, releaseBlob, sweepBlobs } from '../../drive/files.js';
import { validationError } from '../../http/errors.js';
import { sha256Hex } from '../../lib/crypto.js';
import { assistantTables } from './tables.js';
import type { AssistantConfig } from './settings.js';

/** fil_source of the files a chat message carries. */
export const ATTACHMENT_SOURCE = 'assistant_attachment';

/** A chat file as the provider request describes it: its text when it is a text file, else null. */
export interface ChatFile {
  name: string;
  mimeType: string;
  sizeBytes: number;
  text: string | null;
}

/** Media types whose UTF-8 content is sent to the provider as text; any other file is described only. */
const TEXT_TYPES = new Set([
  'application/json',
  'application/ld+json',
  'application/xml',
  'application/yaml',
  'application/x-yaml',
  'application/javascript',
  'application/x-javascript',
  'application/typescript',
  'application/sql',
  'application/x-sh',
  'application/toml',
  'application/csv',
]);

const utf8 = new TextDecoder('utf-8', { fatal: true });

/** The file's text: only for a text media type whose bytes are valid UTF-8 without NUL. */
export function textOf(mimeType: string, data: Buffer): string | null {
  const type = mimeType.split(';')[0]!.trim().toLowerCase();
  if (!type.startsWith('text/') && !TEXT_TYPES.has(type)) return null;
  if (data.includes(0)) return null;
  try {
    return utf8.decode(data);
  } catch {
    return null;
  }
}

/** A file name safe to store and to show: no control characters, at most 255 characters. */
export function attachmentName(filename: string, position: number): string {
  const clean = Array.from(filename.replace(/[\u0000-\u001f\u007f]/g, '').trim()).slice(0, 255).join('');
  return clean === '' ? `attachment-${position + 1}` : clean;
}

/** Refuses more files, or a larger file, than the settings allow (422 ValidationError on attachments). */
export function checkAttachmentLimits(attachments: readonly Attachment[], config: AssistantConfig): void {
  if (attachments.length > config.maxAttachments) {
    throw validationError({ attachments: `at most ${config.maxAttachments} files per message (got ${attachments.length})` }, 'Too many attachments');
  }
  const big = attachments.find((a) => a.data.length > config.maxAttachmentBytes);
  if (big) {
    throw validationError(
      { attachments: `${attachmentName(big.filename, attachments.indexOf(big))} is ${big.data.length} bytes; each file may be at most ${config.maxAttachmentBytes} bytes` },
      'Attachment too large',
    );
  }
}

export function chatFileOf(attachment: Attachment, position: number): ChatFile {
  return {
    name: attachmentName(attachment.filename, position),
    mimeType: attachment.mimetype || 'application/octet-stream',
    sizeBytes: attachment.data.length,
    text: textOf(attachment.mimetype, attachment.data),
  };
}

export interface StoredAttachment {
  fileId: number;
  name: string;
  mimeType: string;
  sizeBytes: number;
}

/**
 * Stores each file as the member's file row (fil_source 'assistant_attachment') over a blob, through the
 * Drive's one blob path, and links it to the message in the order sent. Runs in the caller's transaction.
 * The multipart layer hands the action each file already read into memory, so the bytes go to the store
 * from that buffer.
 */
export async function storeAttachments(
  trx: Kysely<DB>,
  blobs: BlobStore,
  link: (fileId: number, position: number) => Promise<void>,
  owner: { userId: number; time: Date },
  attachments: readonly Attachment[],
): Promise<StoredAttachment[]> {
  const stored: StoredAttachment[] = [];
  for (const [position, attachment] of attachments.entries()) {
    const { name, mimeType, sizeBytes } = chatFileOf(attachment, position);
    const sha256 = sha256Hex(attachment.data);
    const blobId = await ingestBlob(trx, blobs, { sha256, sizeBytes, mimeType, time: owner.time }, () => blobs.put(sha256, Readable.from([attachment.data]), sizeBytes));
    const fileId = await createFileFromBlob(trx, {
      ownerUserId: owner.userId,
      source: ATTACHMENT_SOURCE,
      name,
      folderId: null,
      blobId,
      sizeBytes,
      mimeType,
      time: owner.time,
    });
    await link(fileId, position);
    stored.push({ fileId, name, mimeType, sizeBytes });
  }
  return stored;
}

/** A stored attachment's bytes, read back from the blob store (for the history of a later message). */
export async function readBlob(blobs: BlobStore, key: string): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of await blobs.get(key)) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}

/**
 * Removes a failed message's files (issue 35: a provider failure kept them, counted against nothing):
 * their links, their file rows (deleted) and their blob references, in one transaction, then the bytes of
 * blobs nothing else references. The message itself stays, failed, without files.
 */
export async function discardAttachments(db: Kysely<DB>, blobs: BlobStore, messageId: number, now: Date): Promise<void> {
  const orphaned = await db.transaction().execute(async (trx) => {
    const links = await assistantTables(trx)
      .deleteFrom('asa_assistant_attachments')
      .where('asa_asm_assistant_message_id', '=', messageId)
      .returning('asa_fil_file_id')
      .execute();
    const fileIds = links.map((l) => l.asa_fil_file_id);
    if (fileIds.length === 0) return [];
    const files = await trx
      .selectFrom('fil_files')
      .select(['fil_file_id', 'fil_fbb_file_blob_id'])
      .where('fil_file_id', 'in', fileIds)
      .where('fil_source', '=', ATTACHMENT_SOURCE)
      .forUpdate()
      .execute();
    const gone: number[] = [];
    for (const f of files) if (f.fil_fbb_file_blob_id !== null && (await releaseBlob(trx, f.fil_fbb_file_blob_id))) gone.push(f.fil_fbb_file_blob_id);
    await trx
      .updateTable('fil_files')
      .set({ fil_delete_time: now, fil_update_time: now, fil_fbb_file_blob_id: null })
      .where('fil_file_id', 'in', files.map((f) => f.fil_file_id))
      .execute();
    return gone;
  });
  await sweepBlobs(db, blobs, orphaned);
}
