import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Readable } from 'node:stream';
import { enforceAuthContract, resolveAuthContract } from '../../actions/auth-contract.js';
import { parseContentRange } from '../../drive/uploads/content-range.js';
import { appendChunk, ChunkBodyError, HashStates, partPath, partSize } from '../../drive/uploads/parts.js';
import { findUpload, isUploadExpired, leaseUpload, lowerReceived, recordReceived, releaseLease, uploadExpiresAt, type PendingUpload } from '../../drive/uploads/pending.js';
import { driveStorageFor, installDriveStorage } from '../../drive/storage.js';
import { installPurposeOwners } from '../../drive/uploads/purposes.js';
import { success } from '../../http/envelope.js';
import { actionError, transactionError, validationError } from '../../http/errors.js';
import { RateLimitBucket, settingsLimits } from '../../http/rate-limit/bucket.js';
import { formatTimestamp } from '../../lib/time.js';
import type { Services } from '../../services.js';

/**
 * How long one chunk request may take from taking the upload's lease to its last byte (DESIGN 9: a chunk
 * that stalls is cut off after 60 s and its partial bytes discarded). Tests shorten it.
 */
export const chunkTimings = { stallMs: 60_000 };

const OCTET_STREAM = 'application/octet-stream';

/**
 * PUT and GET /api/v1/drive_upload/{token} (DESIGN 9): the chunks of an upload opened by drive_upload_init.
 * Front-controller order: the api_upload bucket (instead of the general one), then drive_active (403,
 * before authentication, as for the drive_* actions), then authentication; the upload must be the
 * caller's (anyone else's token is the same 404 as an unknown one).
 */
export async function driveUploadSurface(api: FastifyInstance, services: Services): Promise<void> {
  const { db, clock, settings } = services;
  const storage = driveStorageFor(services.config);
  installDriveStorage(storage);
  installPurposeOwners(services.plugins);
  const bucket = new RateLimitBucket('upload', services.rateLimitStore, clock, settingsLimits(settings, 'api_upload_rate_limit_requests', 'api_upload_rate_limit_window'));
  const hashes = new HashStates();
  const config = { feature: 'upload' as const, auth: 'surface' as const, meter: (request: FastifyRequest) => bucket.consume(request.ip) };

  /** drive_active and the caller (with the capability): the caller's user id, or the refusal. */
  async function caller(request: FastifyRequest, capability: 'read' | 'write'): Promise<number | undefined> {
    request.logAction = `drive_upload/${request.method}`;
    if (!settings.bool('drive_active')) throw actionError(403, 'Drive uploads are not available: setting drive_active is off', { setting: 'drive_active' });
    const principal = await request.authenticate();
    enforceAuthContract(principal, resolveAuthContract({ capability }, {}));
    return principal.user?.usr_user_id;
  }

  /** The caller's live upload that the token names: or the refusal (anyone else's is the same 404). */
  async function liveUpload(token: string, userId: number | undefined): Promise<PendingUpload> {
    const upload = await findUpload(db, token);
    if (!upload || upload.userId !== userId) throw actionError(404, 'No such upload', { reason: 'not_found' });
    if (isUploadExpired(upload, clock.now())) throw actionError(404, 'The upload has expired; start a new one', { reason: 'upload_expired' });
    return upload;
  }

  const progress = (upload: PendingUpload, receivedBytes: number, updateTime = upload.updateTime) => ({
    received_bytes: receivedBytes,
    expected_bytes: upload.expectedBytes,
    complete: receivedBytes === upload.expectedBytes,
    expires_time: formatTimestamp(uploadExpiresAt({ updateTime })),
  });

  const wrongStart = (upload: PendingUpload, receivedBytes: number, message = `Chunk must start at byte ${receivedBytes}`) =>
    actionError(409, message, { reason: 'wrong_offset', received_bytes: receivedBytes, expected_bytes: upload.expectedBytes });

  /** The chunk's headers against the upload: or the refusal. */
  function checkChunkHeaders(request: FastifyRequest, upload: PendingUpload): { start: number; end: number; length: number } {
    const type = (request.headers['content-type'] ?? '').split(';')[0]!.trim().toLowerCase();
    if (type !== OCTET_STREAM) throw transactionError(`Chunks are sent as ${OCTET_STREAM}`, 415);
    const range = parseContentRange(request.headers['content-range']);
    if (typeof range === 'string') throw validationError({ 'Content-Range': range });
    if (range.total !== upload.expectedBytes) throw validationError({ 'Content-Range': `total must be the upload's size, ${upload.expectedBytes}` });
    const chunkBytes = settings.int('drive_upload_chunk_bytes');
    if (range.length > chunkBytes) throw transactionError(`A chunk carries at most ${chunkBytes} bytes`, 413, { chunk_bytes: chunkBytes });
    const declared = request.headers['content-length'];
    if (declared !== undefined && Number(declared) !== range.length) {
      throw validationError({ 'Content-Length': `must equal the Content-Range's ${range.length} bytes` });
    }
    return range;
  }

  async function putChunk(request: FastifyRequest, reply: FastifyReply): Promise<FastifyReply> {
    const { token } = request.params as { token: string };
    const userId = await caller(request, 'write');
    // The usual chunk finds its upload and takes the lease in one statement; the refusals (unknown or
    // expired upload, bad headers, another chunk in progress) are then told apart in the usual order.
    const leased = userId === undefined ? null : await leaseUpload(db, token, userId, clock.now());
    const upload = leased?.upload ?? (await liveUpload(token, userId));
    let range: { start: number; end: number; length: number };
    try {
      range = checkChunkHeaders(request, upload);
    } catch (e) {
      if (leased) await releaseLease(db, upload.id, leased.lease);
      throw e;
    }
    if (!leased) throw actionError(409, 'Another chunk of this upload is being received; ask for received_bytes and resume', {
      reason: 'chunk_in_progress',
      received_bytes: upload.receivedBytes,
      expected_bytes: upload.expectedBytes,
    });
    const { lease } = leased;
    let holding = true;
    try {
      const file = partPath(storage.uploadsDir, upload.partName);
      let received = upload.receivedBytes;
      // Bytes recorded but not on disk (a crash before the page cache reached it): resume from the disk.
      let onDisk = await partSize(file);
      // Chunks another node received: fetched from the shared staging.
      if (onDisk < received && storage.staging) {
        onDisk = await storage.staging.restore(upload.partName, file, onDisk, received);
        hashes.forget(upload.id);
      }
      if (onDisk < received) {
        await lowerReceived(db, upload.id, lease, onDisk);
        hashes.forget(upload.id);
        received = onDisk;
      }
      if (range.start !== received) throw wrongStart(upload, received);
      const hash = await hashes.at(upload.id, received, file);
      try {
        await appendChunk({ file, start: range.start, length: range.length, body: request.body as Readable, hash, stallMs: chunkTimings.stallMs });
      } catch (e) {
        if (!(e instanceof ChunkBodyError)) throw e;
        // The rest of a failed chunk's body is not read: the connection ends with this answer.
        reply.header('connection', 'close');
        if (e.failure === 'stalled') throw transactionError('The chunk took too long and was discarded; send it again', 408, { received_bytes: received });
        throw validationError({ body: `must be exactly the ${range.length} bytes the Content-Range names` }, 'The chunk was discarded; send it again');
      }
      await storage.staging?.stage(upload.partName, file, range.start, range.length);
      const total = range.end + 1;
      const sha256 = total === upload.expectedBytes ? hash.copy().digest('hex') : null;
      const at = clock.now();
      if (!(await recordReceived(db, upload.id, lease, { bytes: total, sha256, now: at }))) {
        holding = false;
        const current = await findUpload(db, token);
        throw wrongStart(upload, current?.receivedBytes ?? 0, 'The chunk was not recorded; ask for received_bytes and resume');
      }
      holding = false;
      hashes.remember(upload.id, total, hash);
      return reply.send(success(progress(upload, total, at), total === upload.expectedBytes ? 'All bytes received' : 'Chunk received'));
    } finally {
      if (holding) await releaseLease(db, upload.id, lease);
    }
  }

  await api.register(async (scope) => {
    // Raw bytes on these routes only, handed over as the request stream (never buffered whole); the
    // size cap is the chunk's Content-Range, checked while streaming.
    scope.addContentTypeParser(OCTET_STREAM, (_request, payload, done) => done(null, payload));
    scope.put('/drive_upload/:token', { config }, putChunk);
    scope.get('/drive_upload/:token', { config }, async (request, reply) => {
      const upload = await liveUpload((request.params as { token: string }).token, await caller(request, 'read'));
      return reply.send(success(progress(upload, upload.receivedBytes)));
    });
  });
}
