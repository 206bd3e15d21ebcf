import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Readable } from 'node:stream';
import { enforceAuthContract, resolveAuthContract } from '../../actions/auth-contract.js';
import { parseContentRange } from '../../drive/uploads/content-range.js';
import { appendChunk, ChunkBodyError, HashStates, partPath, plainLayout } from '../../drive/uploads/parts.js';
import {
  CHUNK_LEASE_RENEW_MS,
  deadLease,
  findUpload,
  isUploadExpired,
  leaseRetryAfter,
  leaseUpload,
  lowerReceived,
  recordReceived,
  releaseLease,
  renewLease,
  uploadExpiresAt,
  type PendingUpload,
} from '../../drive/uploads/pending.js';
import { sealedChunkEncoder, sealedLayout } from '../../drive/uploads/sealed-parts.js';
import { success } from '../../http/envelope.js';
import { actionError, transactionError, validationError } from '../../http/errors.js';
import { RateLimitBucket, settingsLimits } from '../../http/rate-limit/bucket.js';
import { formatTimestamp } from '../../lib/time.js';
import type { Services } from '../../services.js';

/**
 * How long one chunk request may take from taking the upload's lease to its last byte (DESIGN 9: a chunk
 * that stalls is cut off after 60 s and its partial bytes discarded). Tests shorten it.
 */
export const chunkTimings = { stallMs: 60_000, renewMs: CHUNK_LEASE_RENEW_MS };

const OCTET_STREAM = 'application/octet-stream';

/**
 * PUT and GET /api/v1/drive_upload/{token} (DESIGN 9): the chunks of an upload opened by drive_upload_init.
 * Front-controller order: the api_upload bucket (instead of the general one), then drive_active (403,
 * before authentication, as for the drive_* actions), then authentication; the upload must be the
 * caller's (anyone else's token is the same 404 as an unknown one).
 */
export async function driveUploadSurface(api: FastifyInstance, services: Services): Promise<void> {
  const { db, clock, settings } = services;
  const storage = services.driveStorage;
  const bucket = new RateLimitBucket('upload', services.rateLimitStore, clock, settingsLimits(settings, 'api_upload_rate_limit_requests', 'api_upload_rate_limit_window'));
  const hashes = new HashStates();
  /** Uploads with a chunk being received by this process: one writer per part file, whatever the database says. */
  const receiving = new Set<string>();
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

  /** 409 chunk_in_progress: how long to wait (data.retry_after and Retry-After, whole seconds) and where the upload stands. */
  async function chunkInProgress(reply: FastifyReply, token: string, upload: PendingUpload) {
    const current = (await findUpload(db, token)) ?? upload;
    const retryAfter = leaseRetryAfter(current, clock.now());
    reply.header('retry-after', String(retryAfter));
    return actionError(409, `Another chunk of this upload is being received; try again in ${retryAfter} s (ask for received_bytes and resume)`, {
      reason: 'chunk_in_progress',
      received_bytes: current.receivedBytes,
      expected_bytes: current.expectedBytes,
      retry_after: retryAfter,
    });
  }

  /**
   * Keeps a chunk's lease alive while the chunk is received (renewed every chunkTimings.renewMs), so it
   * lapses within seconds of this process dying; `lost` aborts when a renewal finds the lease gone.
   */
  function keepLease(uploadId: number, lease: string) {
    const lost = new AbortController();
    let renewing = false;
    const timer = setInterval(() => {
      if (renewing || lost.signal.aborted) return;
      renewing = true;
      renewLease(db, uploadId, lease, clock.now()).then(
        (held) => {
          renewing = false;
          if (!held) lost.abort();
        },
        (e: unknown) => {
          renewing = false;
          api.log.warn({ err: e }, 'chunk lease renewal failed');
        },
      );
    }, chunkTimings.renewMs);
    timer.unref();
    return { signal: lost.signal, stop: () => clearInterval(timer) };
  }

  async function putChunk(request: FastifyRequest, reply: FastifyReply): Promise<FastifyReply> {
    const { token } = request.params as { token: string };
    const userId = await caller(request, 'write');
    // The usual chunk finds its upload and takes the lease in one statement; the refusals (unknown or
    // expired upload, bad headers, another chunk in progress) are then told apart in the usual order.
    // This process is still receiving an earlier chunk of the upload (one whose renewals stalled, so its
    // lease may have lapsed): that one goes on, this one waits, and the lease is left alone.
    const busyHere = receiving.has(token);
    let leased = userId === undefined || busyHere ? null : await leaseUpload(db, token, userId, storage.leaseHolder, clock.now());
    let upload = leased?.upload ?? (await liveUpload(token, userId));
    // A lease left by an earlier boot of this node (it died mid-chunk, and this is it started again):
    // that process is gone, so its lease is taken over at once instead of waited out.
    const dead = leased || busyHere ? null : deadLease(upload, storage.leaseHolder);
    if (dead !== null) {
      leased = await leaseUpload(db, token, userId!, storage.leaseHolder, clock.now(), dead);
      upload = leased?.upload ?? upload;
    }
    let range: { start: number; end: number; length: number };
    try {
      range = checkChunkHeaders(request, upload);
    } catch (e) {
      if (leased) await releaseLease(db, upload.id, leased.lease);
      throw e;
    }
    if (!leased) throw await chunkInProgress(reply, token, upload);
    const { lease } = leased;
    receiving.add(token);
    const keeper = keepLease(upload.id, lease);
    let holding = true;
    try {
      const file = partPath(storage.uploadsDir, upload.partName);
      // A sealed upload's part file holds each chunk as a sealed record: no plaintext byte at rest.
      const sealedTo = upload.sealPublicKey;
      const layout = sealedTo === null ? plainLayout : sealedLayout;
      let received = upload.receivedBytes;
      // Bytes recorded but not on disk (a crash before the page cache reached it): resume from the disk.
      let held = await layout.held(file, received);
      // Chunks another node received: fetched from the shared staging.
      if (held.plain < received && storage.staging) {
        held = await storage.staging.restore(upload.partName, file, held, received, layout);
        hashes.forget(upload.id);
      }
      if (held.plain < received) {
        await lowerReceived(db, upload.id, lease, held.plain);
        hashes.forget(upload.id);
        received = held.plain;
      }
      if (range.start !== received) throw wrongStart(upload, received);
      // A sealed upload's hash is taken at completion, from the decrypted records (no vault here to
      // rebuild a running hash from the file).
      const hash = sealedTo === null ? await hashes.at(upload.id, received, file) : null;
      const encoder = sealedTo === null ? null : sealedChunkEncoder(sealedTo, upload.partName, range.start, range.length);
      try {
        await appendChunk({ file, start: held.stored, length: range.length, body: request.body as Readable, hash, encoder, stallMs: chunkTimings.stallMs, signal: keeper.signal });
      } catch (e) {
        if (!(e instanceof ChunkBodyError)) throw e;
        // The rest of a failed chunk's body is not read: the connection ends with this answer.
        reply.header('connection', 'close');
        if (e.failure === 'stalled') throw transactionError('The chunk took too long and was discarded; send it again', 408, { received_bytes: received });
        if (e.failure === 'lost') {
          holding = false;
          throw wrongStart(upload, (await findUpload(db, token))?.receivedBytes ?? received, 'The chunk was not recorded; ask for received_bytes and resume');
        }
        throw validationError({ body: `must be exactly the ${range.length} bytes the Content-Range names` }, 'The chunk was discarded; send it again');
      }
      const storedLength = encoder ? encoder.storedLength : range.length;
      await storage.staging?.stage(upload.partName, file, { plainStart: range.start, storedStart: held.stored, storedLength });
      const total = range.end + 1;
      const sha256 = hash && total === upload.expectedBytes ? hash.copy().digest('hex') : null;
      const at = clock.now();
      if (!(await recordReceived(db, upload.id, lease, { bytes: total, sha256, now: at }))) {
        holding = false;
        const current = await findUpload(db, token);
        throw wrongStart(upload, current?.receivedBytes ?? 0, 'The chunk was not recorded; ask for received_bytes and resume');
      }
      holding = false;
      if (hash) hashes.remember(upload.id, total, hash);
      return reply.send(success(progress(upload, total, at), total === upload.expectedBytes ? 'All bytes received' : 'Chunk received'));
    } finally {
      keeper.stop();
      receiving.delete(token);
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
