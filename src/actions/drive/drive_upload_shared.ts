import type { Kysely } from 'kysely';
import type { DB } from '../../db/types.js';
import type { UploadDestination } from '../../drive/uploads/place.js';
import { businessError, validationError } from '../../http/errors.js';
import { notFound, resolveItem } from '../../drive/tree.js';

// What drive_upload_init and drive_upload_complete share: the destination check (asked at init and asked
// again at completion, since grants and folders may change in between) and the refusal shape.

/** A refusal of the upload actions (422 ActionError, data.reason as DESIGN 9 lists them). */
export type UploadRefusal = 'not_found' | 'upload_expired' | 'hash_mismatch' | 'size_mismatch';

export function uploadRefusal(reason: UploadRefusal, message: string, data: Record<string, unknown> = {}) {
  return businessError(message, { reason, ...data });
}

/**
 * Where a Drive upload lands for this user: a new version of `fileId`, a new file in `folderId`, or a new
 * file at their own root. The user must own or edit the target, and it must not be in the trash.
 */
export async function resolveDestination(db: Kysely<DB>, userId: number, target: { folderId: number | null; fileId: number | null }): Promise<UploadDestination> {
  if (target.fileId !== null) {
    const file = await resolveItem(db, userId, { kind: 'file', id: target.fileId }, 'edit');
    if (file.inTrash) throw notFound('file');
    return { ownerUserId: file.ownerUserId, folderId: file.parentId, fileId: file.id, sealed: file.sealed };
  }
  if (target.folderId !== null) {
    const folder = await resolveItem(db, userId, { kind: 'folder', id: target.folderId }, 'edit');
    if (folder.inTrash) throw notFound('folder');
    return { ownerUserId: folder.ownerUserId, folderId: folder.id, fileId: null, sealed: folder.sealed };
  }
  return { ownerUserId: userId, folderId: null, fileId: null, sealed: false };
}

const MIME_RE = /^[a-z0-9][a-z0-9!#$&^_.+-]{0,126}\/[a-z0-9][a-z0-9!#$&^_.+-]{0,126}$/;

/** A media type as stored and served (type/subtype, lowercase, no parameters), or null. */
export function checkMimeType(raw: string | null | undefined): string | null {
  if (raw === undefined || raw === null || raw.trim() === '') return null;
  const mime = raw.trim().toLowerCase();
  if (!MIME_RE.test(mime)) throw validationError({ mime_type: 'must be a media type such as text/plain' });
  return mime;
}

export function checkSha256(raw: string | null | undefined): string | null {
  if (raw === undefined || raw === null || raw === '') return null;
  const sha = raw.trim().toLowerCase();
  if (!/^[0-9a-f]{64}$/.test(sha)) throw validationError({ sha256: 'must be 64 hexadecimal characters' });
  return sha;
}
