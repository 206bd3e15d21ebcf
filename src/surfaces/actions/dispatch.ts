import type { FastifyReply, FastifyRequest } from 'fastify';
import { SURFACE_AUTH_DEFAULTS } from '../../actions/auth-contract.js';
import type { Action, ActionContext, ActionResult, Attachment, WebContext } from '../../actions/define.js';
import {
  IdempotencyStore,
  MAX_KEY_LENGTH,
  SECRET_ANSWER_MARKER,
  idempotencyScope,
  isSecretAnswerMarker,
  requestFingerprint,
  type ClaimOutcome,
  type StoredResponse,
} from '../../actions/idempotency.js';
import { isSealedCopy, openSealedCopy, sealedCopy, sealedCopyAd } from '../../accounts/vault/sealed-replay.js';
import type { Principal } from '../../accounts/auth/principal.js';
import { coerceInput, normaliseBody } from '../../actions/input.js';
import { mailerFromSettings, OutboxMailer, type MailMessage } from '../../mail/mailer.js';
import { failure, serializeApiPayload, success } from '../../http/envelope.js';
import { ApiError, actionError, isApiError, validationError } from '../../http/errors.js';
import { nulFieldOf, nulRefusal } from '../../http/input-text.js';
import { sha256Hex } from '../../lib/crypto.js';
import type { Services } from '../../services.js';
import { vaultWindowOf } from '../../accounts/vault/request-window.js';
import { admit, findAction, queryOf, requireSetting } from './shared.js';

const MAX_FILES = 10;
const MAX_FILE_BYTES = 10 * 1024 * 1024;

interface RawRequest {
  body: Record<string, unknown>;
  attachments: Attachment[];
}

async function readRequest(request: FastifyRequest, action: Action): Promise<RawRequest> {
  if (request.isMultipart()) {
    if (!action.descriptor.accepts_files) {
      throw validationError({ attachments: 'this action does not accept files' }, 'This action does not accept multipart uploads');
    }
    const fields: Record<string, unknown> = {};
    const attachments: Attachment[] = [];
    for await (const part of request.parts({ limits: { files: MAX_FILES, fileSize: MAX_FILE_BYTES } })) {
      if (part.type === 'file') {
        if (part.fieldname !== 'attachments[]' && part.fieldname !== 'attachments') {
          await part.toBuffer();
          throw validationError({ [part.fieldname]: 'files are accepted only as attachments[]' });
        }
        attachments.push({ filename: part.filename, mimetype: part.mimetype, data: await part.toBuffer() });
      } else {
        const name = part.fieldname.endsWith('[]') ? part.fieldname.slice(0, -2) : part.fieldname;
        const prior = fields[name];
        fields[name] = prior === undefined ? part.value : Array.isArray(prior) ? [...prior, part.value] : [prior, part.value];
      }
    }
    return { body: fields, attachments };
  }
  const body = request.body;
  if (body !== undefined && body !== null && (typeof body !== 'object' || Array.isArray(body))) {
    throw validationError({ body: 'must be an object of the action fields' });
  }
  return { body: normaliseBody(body ?? {}), attachments: [] };
}

function idempotencyKeyOf(request: FastifyRequest): string | null {
  const raw = request.headers['idempotency-key'];
  const key = Array.isArray(raw) ? raw[0] : raw;
  if (key === undefined) return null;
  if (key.length < 1 || key.length > MAX_KEY_LENGTH) {
    throw validationError({ 'Idempotency-Key': `must be 1 to ${MAX_KEY_LENGTH} characters` });
  }
  return key;
}

/**
 * The contract's one 409 for a key that cannot run this request (state table: "same key with different
 * body or action, or request while original still executing"): data.reason idempotency_key_reused, and
 * in_progress true while the original still executes, so a client can tell "retry later" from "never".
 */
function refuse(outcome: ClaimOutcome & { kind: 'reused' | 'executing' }): ApiError {
  return outcome.kind === 'reused'
    ? actionError(409, 'Idempotency-Key was already used with a different body or action', { reason: 'idempotency_key_reused' })
    : actionError(409, 'A request with this Idempotency-Key is still executing; retry once it has finished', { reason: 'idempotency_key_reused', in_progress: true });
}

/**
 * A stored answer for replay: a sealed copy is opened through the caller's vault window, or refused with
 * 409; the marker of an answer that held a secret is always refused with 409 (the action is not repeated).
 */
async function replayStored(services: Services, request: FastifyRequest, reply: FastifyReply, principal: Principal | null, claim: { scope: string; keyHash: string }, response: StoredResponse) {
  if (isSecretAnswerMarker(response.body)) {
    throw actionError(409, 'The answer to this request held a secret shown only once, so it was not kept; the action was not repeated.', {
      reason: 'secret_answer_not_kept',
    });
  }
  if (!isSealedCopy(response.body)) return sendStored(reply, response.status, response.body, true);
  const window = principal?.credential === 'browser' ? vaultWindowOf(services, request) : null;
  const body = await openSealedCopy(services.db, window, principal?.user?.usr_user_id ?? null, response.body, sealedCopyAd(claim));
  return sendStored(reply, response.status, body, true);
}

function sendStored(reply: FastifyReply, status: number, body: string, replayed: boolean): FastifyReply {
  if (replayed) reply.header('idempotency-replayed', 'true');
  if (status >= 400) reply.errortype = (JSON.parse(body) as { errortype?: string }).errortype ?? null;
  return reply.code(status).type('application/json; charset=utf-8').send(body);
}

/**
 * POST /action/{name}: resolve, requires_setting (before authentication), admit, read the body, the
 * idempotency look (before validation), validate, claim, run in a transaction, store, send.
 */
export async function dispatchAction(services: Services, request: FastifyRequest, reply: FastifyReply, name: string): Promise<FastifyReply> {
  const { db, clock, settings, buckets } = services;
  request.logAction = name;
  const action = findAction(services, name);
  requireSetting(services, action);
  const decision = await admit(request, action, SURFACE_AUTH_DEFAULTS.action);
  if (!decision) await buckets.failedAuth.check(request.ip);
  const principal = decision?.principal ?? null;

  const { body, attachments } = await readRequest(request, action);

  const store = new IdempotencyStore(db, clock);
  const key = idempotencyKeyOf(request);
  const scope = key === null ? null : idempotencyScope(principal);
  let claim: { scope: string; keyHash: string; fingerprint: string } | null = null;
  if (key !== null && scope !== null) {
    const files = attachments.map((a) => ({ filename: a.filename, mimetype: a.mimetype, sha256: sha256Hex(a.data) }));
    claim = { scope, keyHash: IdempotencyStore.hashKey(key), fingerprint: requestFingerprint(name, files.length > 0 ? { body, attachments: files } : body) };
    // The 409 is decided before input validation.
    const seen = await store.inspect(claim.scope, claim.keyHash, claim.fingerprint);
    if (seen.kind === 'replay') return replayStored(services, request, reply, principal, claim, seen.response);
    if (seen.kind === 'reused' || seen.kind === 'executing') throw refuse(seen);
  }

  const nul = nulFieldOf(body) ?? (attachments.some((a) => nulFieldOf([a.filename, a.mimetype]) !== null) ? 'attachments' : null);
  if (nul !== null) throw nulRefusal(nul, 'action');
  const input = coerceInput(action.descriptor.input, body);
  if (!input.ok) throw validationError(input.errors);

  let claimId: number | null = null;
  if (claim) {
    const outcome = await store.claim(claim.scope, claim.keyHash, claim.fingerprint, name);
    if (outcome.kind === 'replay') return replayStored(services, request, reply, principal, claim, outcome.response);
    if (outcome.kind === 'reused' || outcome.kind === 'executing') throw refuse(outcome);
    if (outcome.kind === 'claimed') claimId = outcome.id;
  }

  // Website sessions release their lock once identity is resolved; the action works on a copy of the data,
  // written back only under session_write.
  let webSession: { id: number; data: Record<string, unknown> } | null = null;
  if (principal && (principal.credential === 'browser' || principal.credential === 'guest')) {
    const loaded = await request.webSession();
    if (loaded) webSession = { id: loaded.id, data: structuredClone(loaded.data) };
  }

  const outbox: MailMessage[] = [];
  let signInUserId: number | null = null;
  const web: WebContext | null = webSession
    ? {
        sessionId: webSession.id,
        baseUrl: services.config.baseUrl,
        signInAfterSuccess: (userId) => void (signInUserId = userId),
        vault: vaultWindowOf(services, request),
      }
    : null;
  const context = (trx: typeof db): ActionContext => ({
    name,
    input: input.values,
    user: principal?.user ?? null,
    principal,
    db: trx,
    clock,
    settings,
    caches: services.modelCaches,
    mail: (m) => void outbox.push(m),
    attachments,
    session: webSession?.data ?? null,
    query: queryOf(request),
    ip: request.ip,
    recordFailedAuth: () => buckets.failedAuth.record(request.ip),
    web,
    log: request.log,
    storeDeps: services.store.deps,
    plugins: services.plugins,
    featureRegistry: services.tiers.registry,
    driveStorage: services.driveStorage,
    vaultParts: services.vaultParts,
    passkeyVetoes: services.passkeyVetoes,
  });
  // An answer holding sealed content is kept for replay only sealed (DESIGN 10); one holding a secret,
  // only as a marker.
  const storedCopy = (trx: typeof db, result: ActionResult, t: string): Promise<string> => {
    if (action.descriptor.answer_holds_secret) return Promise.resolve(SECRET_ANSWER_MARKER);
    return result.sealedFor && claim ? sealedCopy(trx, result.sealedFor, t, sealedCopyAd(claim)) : Promise.resolve(t);
  };
  const respond = (result: ActionResult): string =>
    serializeApiPayload(success(result.data, result.message ?? '', result.redirect !== undefined ? { redirect: result.redirect } : {}));

  let status = 200;
  let text: string;
  try {
    if (action.descriptor.mutates) {
      text = await db.transaction().execute(async (trx) => {
        const result = await action.run(context(trx));
        const t = respond(result);
        if (claimId !== null) await store.store(claimId, { status, body: await storedCopy(trx, result, t) }, trx);
        return t;
      });
    } else {
      const result = await action.run(context(db));
      text = respond(result);
      // A sealed copy is sealed and stored in one transaction (it holds the vault row shared: lockVault).
      const id = claimId;
      if (id !== null && result.sealedFor) await db.transaction().execute(async (trx) => store.store(id, { status, body: await storedCopy(trx, result, text) }, trx));
      else if (id !== null) await store.store(id, { status, body: text });
    }
  } catch (e) {
    // A refusal the logic decided (a 4xx) is the request's answer and is kept for replay; anything else
    // (invalid input included) gives the key back so the client may retry.
    if (isApiError(e) && e.status < 500) {
      status = e.status;
      text = serializeApiPayload(failure(e));
      // Input the logic found invalid claims no key, like the schema's validation: the client may
      // correct the body and send it again under the same key (nothing was written).
      if (claimId !== null && e.errortype === 'ValidationError') await store.release(claimId);
      else if (claimId !== null) await store.store(claimId, { status, body: text });
      // Mail queued by a refused action is never sent.
      return sendStored(reply, status, text, false);
    }
    if (claimId !== null) await store.release(claimId);
    throw e;
  }

  if (decision?.sessionWrite && webSession) await services.webSessions.saveData(webSession.id, webSession.data);
  if (signInUserId !== null) {
    const { cookieValue, session } = await services.webSessions.signIn(await request.webSession(), signInUserId);
    request.useWebSession(cookieValue, session);
  }
  if (outbox.length > 0) {
    const mailer = mailerFromSettings(settings, db, clock);
    const sending = (async () => {
      for (const message of outbox) {
        try {
          await mailer.send(message);
        } catch (err) {
          request.log.error({ err, action: name, template: message.template }, 'outgoing mail failed');
        }
      }
    })();
    // SMTP goes out after the answer: its delay would tell a caller whether an address has an account
    // (password_reset_1 mails only real ones). The outbox table is a quick local write and stays in line.
    if (mailer instanceof OutboxMailer) await sending;
  }
  return sendStored(reply, status, text, false);
}
