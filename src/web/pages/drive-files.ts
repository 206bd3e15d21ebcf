import { createHmac } from 'node:crypto';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { Readable } from 'node:stream';
import { verifySecret } from '../../accounts/passwords.js';
import { folderChain, resolveItem, tierReader } from '../../drive/tree.js';
import { contentDisposition, parseRange, servedContentType } from '../../drive/serving.js';
import { fileContentKey, openSealedFileBytes, openSealedName, type SealedFileRow } from '../../drive/sealed-files.js';
import { vaultWindowOf } from '../../accounts/vault/request-window.js';
import { isApiError } from '../../http/errors.js';
import { safeEqual, sha256Hex } from '../../lib/crypto.js';
import type { Services } from '../../services.js';
import { bodyField, checkPostedForm, sendViewerPage, tokenInput, type Viewer } from '../forms.js';
import { html } from '../html.js';
import { pageViewer } from '../viewer.js';

// Serving Drive bytes to browsers (DESIGN 9): /drive/file/{id} for the signed-in owner or a grantee, and
// /s/{token} for a public share link (expiry, optional password, revoked links gone). Whoever may open
// the file is decided here, not by the API's row check. The stored media type is sent as is (never
// sniffed), always as an attachment, with Range support.

/** How long a share link's password unlocks it in this browser. */
const UNLOCK_SECONDS = 3600;

interface ServedFile {
  fileId: number;
  name: string;
  mimeType: string | null;
  sizeBytes: number;
  blobId: number;
  /** A sealed file's parts (DESIGN 10): its name and bytes open only through the owner's vault window. */
  sealed: SealedFileRow | null;
}

async function servedFile(services: Services, fileId: number): Promise<ServedFile | null> {
  const row = await services.db
    .selectFrom('fil_files')
    .select(['fil_file_id', 'fil_name', 'fil_mime_type', 'fil_size_bytes', 'fil_fbb_file_blob_id', 'fil_usr_user_id', 'fil_sealed_key', 'fil_sealed_name', 'fil_sealed_mime'])
    .where('fil_file_id', '=', fileId)
    .where('fil_delete_time', 'is', null)
    .executeTakeFirst();
  if (!row || row.fil_fbb_file_blob_id === null) return null;
  return {
    fileId: row.fil_file_id,
    name: row.fil_name ?? 'download',
    mimeType: row.fil_mime_type,
    sizeBytes: Number(row.fil_size_bytes ?? 0),
    blobId: row.fil_fbb_file_blob_id,
    sealed: row.fil_sealed_key !== null ? row : null,
  };
}

function notFoundPage(reply: FastifyReply, viewer: Viewer): FastifyReply {
  return sendViewerPage(reply, viewer, 'Not found', html`<div class="card"><p>There is no file here.</p></div>`, 404);
}

/** A sealed file whose owner's vault is not open to this request: 423 Locked (DESIGN 10), never the bytes. */
function lockedPage(reply: FastifyReply, viewer: Viewer, isOwner: boolean): FastifyReply {
  const body = isOwner
    ? html`<div class="card" id="sealed-locked"><h1>This file is sealed</h1><p>Its name and contents open only while your vault is unlocked.</p><p><a class="button" href="/profile/security#vault">Unlock your vault</a></p></div>`
    : html`<div class="card" id="sealed-locked"><h1>This file is sealed</h1><p>Only its owner can open it.</p></div>`;
  reply.header('cache-control', 'no-store');
  return sendViewerPage(reply, viewer, 'Sealed file', body, 423);
}

/** The share link's unlock cookie value: expiry and a MAC keyed by the link's password hash (server-only). */
function unlockValue(linkId: number, passwordHash: string, expiresMs: number): string {
  const mac = createHmac('sha256', passwordHash).update(`${linkId}.${expiresMs}`).digest('hex');
  return `${expiresMs}.${mac}`;
}

function isUnlocked(cookie: string | undefined, linkId: number, passwordHash: string, nowMs: number): boolean {
  const m = cookie === undefined ? null : /^(\d{1,15})\.[0-9a-f]{64}$/.exec(cookie);
  if (!m) return false;
  const expiresMs = Number(m[1]);
  return expiresMs > nowMs && safeEqual(cookie!, unlockValue(linkId, passwordHash, expiresMs));
}

export function driveFilePages(web: FastifyInstance, services: Services): void {
  const { db, clock, settings } = services;
  const { blobs } = services.driveStorage;

  /** `contentKey`: a sealed file's key, opened for this request (its name and bytes are decrypted as served). */
  async function stream(request: FastifyRequest, reply: FastifyReply, file: ServedFile, contentKey: Buffer | null = null): Promise<FastifyReply> {
    const blob = await db.selectFrom('fbb_file_blobs').select(['fbb_storage_key', 'fbb_sha256', 'fbb_driver']).where('fbb_file_blob_id', '=', file.blobId).executeTakeFirstOrThrow();
    if (blob.fbb_driver !== blobs.driver) throw new Error(`blob ${file.blobId} lives in the '${blob.fbb_driver}' store`);
    reply.headers({
      'content-type': servedContentType(file.mimeType),
      'x-content-type-options': 'nosniff',
      'content-disposition': contentDisposition(file.name),
      'content-security-policy': "default-src 'none'; sandbox allow-downloads",
      'accept-ranges': 'bytes',
      'cache-control': contentKey ? 'no-store' : 'private, no-cache',
      etag: `"${blob.fbb_sha256.trim()}"`,
    });
    const range = parseRange(request.headers.range, file.sizeBytes);
    if (range === 'unsatisfiable') return reply.code(416).header('content-range', `bytes */${file.sizeBytes}`).type('text/plain').send('');
    const length = range ? range.end - range.start + 1 : file.sizeBytes;
    if (range) reply.code(206).header('content-range', `bytes ${range.start}-${range.end}/${file.sizeBytes}`);
    reply.header('content-length', String(length));
    if (request.method === 'HEAD') return reply.send();
    if (length === 0) return reply.send(Readable.from([]));
    const body = contentKey
      ? await openSealedFileBytes((r) => blobs.get(blob.fbb_storage_key, r), contentKey, file.fileId, file.sizeBytes, range)
      : await blobs.get(blob.fbb_storage_key, range ?? undefined);
    return reply.send(body);
  }

  const fileRoute = async (request: FastifyRequest, reply: FastifyReply) => {
    const viewer = await pageViewer(request, services);
    if (!settings.bool('drive_active')) return notFoundPage(reply, viewer);
    if (!viewer.user) return reply.redirect(`/login?next=${encodeURIComponent(request.url)}`, 303);
    const fileId = Number((request.params as { id: string }).id);
    if (!Number.isSafeInteger(fileId) || fileId < 1) return notFoundPage(reply, viewer);
    try {
      await resolveItem(db, viewer.user.usr_user_id, { kind: 'file', id: fileId }, 'read');
    } catch (e) {
      if (isApiError(e) && e.status < 500) return notFoundPage(reply, viewer);
      throw e;
    }
    const file = await servedFile(services, fileId);
    if (!file) return notFoundPage(reply, viewer);
    if (!file.sealed) return stream(request, reply, file);
    const reader = { db, window: vaultWindowOf(services, request), userId: viewer.user.usr_user_id };
    const contentKey = await fileContentKey(file.sealed, reader);
    if (!contentKey) return lockedPage(reply, viewer, file.sealed.fil_usr_user_id === viewer.user.usr_user_id);
    const name = await openSealedName(file.sealed, reader, file.mimeType);
    return stream(request, reply, { ...file, name: name.name ?? 'download', mimeType: name.mime_type }, contentKey);
  };
  web.get('/drive/file/:id', fileRoute);

  /**
   * The live link the token names and its file, or null (unknown, revoked, expired, file gone or in the
   * trash, its owner deleted or disabled, links no longer in the owner's plan): each answered as a missing link.
   */
  async function liveLink(token: string) {
    if (!settings.bool('drive_active') || !/^[0-9a-f]{64}$/.test(token)) return null;
    const now = clock.now();
    const link = await db
      .selectFrom('fsl_file_share_links')
      .innerJoin('fil_files', 'fil_file_id', 'fsl_fil_file_id')
      // A deleted or disabled account shares nothing any more (issue 35).
      .innerJoin('usr_users', 'usr_user_id', 'fil_usr_user_id')
      .select(['fsl_file_share_link_id', 'fsl_password_hash', 'fsl_expires_time', 'fil_file_id', 'fil_is_trashed', 'fil_fol_folder_id', 'fil_usr_user_id'])
      .where('fsl_token_hash', '=', sha256Hex(token))
      .where('usr_delete_time', 'is', null)
      .where('usr_is_disabled', '=', false)
      .where('fsl_revoked_time', 'is', null)
      .where('fsl_delete_time', 'is', null)
      .where('fil_delete_time', 'is', null)
      .executeTakeFirst();
    if (!link || link.fil_is_trashed || link.fil_usr_user_id === null) return null;
    if (link.fsl_expires_time !== null && link.fsl_expires_time.getTime() <= now.getTime()) return null;
    if (link.fil_fol_folder_id !== null && (await folderChain(db, link.fil_fol_folder_id)).some((f) => f.isTrashed)) return null;
    if ((await tierReader(db, services.tiers.registry, services.modelCaches.userTiers).getUserFeature(link.fil_usr_user_id, 'drive_share_links', false)) !== true) return null;
    const file = await servedFile(services, link.fil_file_id);
    // Sealed files have no public links (drive_link_create refuses them); none is served if one exists.
    return file && !file.sealed ? { id: link.fsl_file_share_link_id, passwordHash: link.fsl_password_hash, file } : null;
  }

  const unlockCookie = (linkId: number) => `gh_link_${linkId}`;

  function passwordPage(reply: FastifyReply, viewer: Viewer, token: string, error: string | null, status: number): FastifyReply {
    const body = html`<div class="card"><h1>This file is protected</h1>
<form method="post" action="/s/${token}">${tokenInput(viewer, 'share-link')}
<label for="password">Password</label>
<input id="password" name="password" type="password" autocomplete="off" required ${error ? html`aria-describedby="password-error"` : ''}>
${error ? html`<div class="field-error" id="password-error" role="alert">${error}</div>` : ''}
<button type="submit">Open</button></form></div>`;
    return sendViewerPage(reply, viewer, 'Protected file', body, status);
  }

  const linkRoute = async (request: FastifyRequest, reply: FastifyReply) => {
    const { token } = request.params as { token: string };
    const link = await liveLink(token);
    if (!link) return notFoundPage(reply, await pageViewer(request, services));
    if (link.passwordHash !== null && !isUnlocked(request.cookies[unlockCookie(link.id)], link.id, link.passwordHash, clock.nowMs())) {
      return passwordPage(reply, await pageViewer(request, services), token, null, 200);
    }
    return stream(request, reply, link.file);
  };
  web.get('/s/:token', linkRoute);

  web.post('/s/:token', async (request, reply) => {
    const { token } = request.params as { token: string };
    const viewer = await pageViewer(request, services);
    const link = await liveLink(token);
    if (!link) return notFoundPage(reply, viewer);
    if (link.passwordHash === null) return reply.redirect(`/s/${token}`, 303);
    if (!(await checkPostedForm(request, reply, viewer, 'share-link'))) return reply;
    // Guessing is counted like failed sign-ins: the failed-auth bucket per address.
    await services.buckets.failedAuth.check(request.ip);
    if (!(await verifySecret(link.passwordHash, bodyField(request, 'password')))) {
      await services.buckets.failedAuth.record(request.ip);
      return passwordPage(reply, viewer, token, 'That password is not right.', 403);
    }
    const expiresMs = clock.nowMs() + UNLOCK_SECONDS * 1000;
    reply.setCookie(unlockCookie(link.id), unlockValue(link.id, link.passwordHash, expiresMs), {
      path: `/s/${token}`,
      httpOnly: true,
      sameSite: 'lax',
      secure: request.protocol === 'https',
      maxAge: UNLOCK_SECONDS,
    });
    return reply.redirect(`/s/${token}`, 303);
  });
}
