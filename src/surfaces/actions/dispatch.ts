import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Kysely } from 'kysely';
import { SURFACE_AUTH_DEFAULTS, type AuthDecision } from '../../actions/auth-contract.js';
import { enforceGuards } from '../../actions/guards.js';
import type { DB } from '../../db/types.js';
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
import { type ApiError, actionError, isApiError, validationError } from '../../http/errors.js';
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
 * POST /action/{name}, in the contract's order. Each stage is one function below; the order is here:
 *
 *   resolve (404, then requires_setting 403, before authentication) → admit (the auth contract)
 *   → read the body → claim the Idempotency-Key (replay or 409, before validation) → validate (invalid
 *   input gives the claim back) → guards and run (in one transaction for a mutating action; the answer is kept under
 *   the key) → after-commit effects (session data, sign-in, mail) → answer.
 */
export async function dispatchAction(services: Services, request: FastifyRequest, reply: FastifyReply, name: string): Promise<FastifyReply> {
  request.logAction = name;
  const action = resolve(services, name);
  const decision = await admitCaller(services, request, action);
  const principal = decision?.principal ?? null;
  const raw = await readRequest(request, action);
  const store = new IdempotencyStore(services.db, services.clock);
  const claim = keyClaimOf(request, principal, name, raw);
  const claimed = claim ? await claimKey(store, claim, name) : null;
  if (claim && claimed?.kind === 'replay') return replayStored(services, request, reply, principal, claim, claimed.response);
  const input = await validatedOrReleased(action, raw, store, claimed?.kind === 'claimed' ? claimed.id : null);
  const call = await openCall(services, request, action, principal, raw, input);
  const outcome = await runAndKeep(services, action, call, store, claim, claimed?.kind === 'claimed' ? claimed.id : null);
  if (outcome.refused) return sendStored(reply, outcome.status, outcome.text, false);
  await afterCommit(services, request, decision, call.effects);
  return sendStored(reply, outcome.status, outcome.text, false);
}

/** The action a name resolves to (or 404), and its requires_setting (403) before authentication. */
function resolve(services: Services, name: string): Action {
  const action = findAction(services, name);
  requireSetting(services, action);
  return action;
}

/** The caller admitted by the action's auth contract; a sessionless call counts against the failed-auth limit's check. */
async function admitCaller(services: Services, request: FastifyRequest, action: Action): Promise<AuthDecision | null> {
  const decision = await admit(request, action, SURFACE_AUTH_DEFAULTS.action);
  if (!decision) await services.buckets.failedAuth.check(request.ip);
  return decision;
}

interface KeyClaim {
  scope: string;
  keyHash: string;
  fingerprint: string;
}

/** The Idempotency-Key of this request with its scope and the request's fingerprint (null: none, or unscoped). */
function keyClaimOf(request: FastifyRequest, principal: Principal | null, name: string, raw: RawRequest): KeyClaim | null {
  const key = idempotencyKeyOf(request);
  const scope = key === null ? null : idempotencyScope(principal);
  if (key === null || scope === null) return null;
  const files = raw.attachments.map((a) => ({ filename: a.filename, mimetype: a.mimetype, sha256: sha256Hex(a.data) }));
  return { scope, keyHash: IdempotencyStore.hashKey(key), fingerprint: requestFingerprint(name, files.length > 0 ? { body: raw.body, attachments: files } : raw.body) };
}

/** The body's text (no NUL) and the coerced input, or 422 ValidationError. */
function validate(action: Action, raw: RawRequest): Record<string, unknown> {
  const nul = nulFieldOf(raw.body) ?? (raw.attachments.some((a) => nulFieldOf([a.filename, a.mimetype]) !== null) ? 'attachments' : null);
  if (nul !== null) throw nulRefusal(nul, 'action');
  const input = coerceInput(action.descriptor.input, raw.body);
  if (!input.ok) throw validationError(input.errors);
  return input.values;
}

/** The validated input; input that fails validation claims no key (the claim is given back), so the client may correct it and retry under the same key. */
async function validatedOrReleased(action: Action, raw: RawRequest, store: IdempotencyStore, claimId: number | null): Promise<Record<string, unknown>> {
  try {
    return validate(action, raw);
  } catch (e) {
    if (claimId !== null) await store.release(claimId);
    throw e;
  }
}

/**
 * Claims the key for this run, before input validation: the claim's id, a stored answer to replay, or the
 * 409. The claim's insert is also the look-up (one statement for a new key, where a read before validation
 * and the insert after it were two); input that fails validation gives the claim back (see dispatchAction).
 */
async function claimKey(store: IdempotencyStore, claim: KeyClaim, name: string): Promise<{ kind: 'claimed'; id: number } | { kind: 'replay'; response: StoredResponse } | null> {
  const outcome = await store.claim(claim.scope, claim.keyHash, claim.fingerprint, name);
  if (outcome.kind === 'replay') return { kind: 'replay', response: outcome.response };
  if (outcome.kind === 'reused' || outcome.kind === 'executing') throw refuse(outcome);
  if (outcome.kind === 'claimed') return { kind: 'claimed', id: outcome.id };
  return null;
}

/** What a run leaves for after its commit: the session's data (session_write), a sign-in, the queued mail. */
interface Effects {
  webSession: { id: number; data: Record<string, unknown> } | null;
  outbox: MailMessage[];
  signInUserId: number | null;
}

/** One run of an action: its context, bound to a transaction when it runs, and its effects. */
interface Call {
  context(db: Kysely<DB>): ActionContext;
  effects: Effects;
}

/**
 * The run's context. Website sessions release their lock once identity is resolved; the action works on a
 * copy of the data, written back only under session_write.
 */
async function openCall(services: Services, request: FastifyRequest, action: Action, principal: Principal | null, raw: RawRequest, input: Record<string, unknown>): Promise<Call> {
  let webSession: Effects['webSession'] = null;
  if (principal && (principal.credential === 'browser' || principal.credential === 'guest')) {
    const loaded = await request.webSession();
    if (loaded) webSession = { id: loaded.id, data: structuredClone(loaded.data) };
  }
  const effects: Effects = { webSession, outbox: [], signInUserId: null };
  const web: WebContext | null = webSession
    ? {
        sessionId: webSession.id,
        baseUrl: services.config.baseUrl,
        signInAfterSuccess: (userId) => void (effects.signInUserId = userId),
        vault: vaultWindowOf(services, request),
      }
    : null;
  const { clock, settings, buckets } = services;
  const context = (db: Kysely<DB>): ActionContext => ({
    name: action.name,
    input,
    user: principal?.user ?? null,
    principal,
    db,
    clock,
    settings,
    baseUrl: services.config.baseUrl,
    caches: services.modelCaches,
    mail: (m) => void effects.outbox.push(m),
    attachments: raw.attachments,
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
  return { context, effects };
}

type Outcome = { refused: boolean; status: number; text: string };

/**
 * The guard stage and `run`, in one transaction for a mutating action, with the answer kept under the
 * claimed key. A refusal the logic decided (a 4xx) is the request's answer and is kept for replay;
 * anything else (invalid input included) gives the key back so the client may retry.
 */
async function runAndKeep(services: Services, action: Action, call: Call, store: IdempotencyStore, claim: KeyClaim | null, claimId: number | null): Promise<Outcome> {
  const { db } = services;
  const status = 200;
  const run = async (trx: Kysely<DB>) => action.run(await enforceGuards(action.guards, call.context(trx)));
  // An answer holding sealed content is kept for replay only sealed (DESIGN 10); one holding a secret,
  // only as a marker.
  const storedCopy = (trx: Kysely<DB>, result: ActionResult, t: string): Promise<string> => {
    if (action.descriptor.answer_holds_secret) return Promise.resolve(SECRET_ANSWER_MARKER);
    return result.sealedFor && claim ? sealedCopy(trx, result.sealedFor, t, sealedCopyAd(claim)) : Promise.resolve(t);
  };
  try {
    if (action.descriptor.mutates) {
      const text = await db.transaction().execute(async (trx) => {
        const result = await run(trx);
        const t = answerText(result);
        if (claimId !== null) await store.store(claimId, { status, body: await storedCopy(trx, result, t) }, trx);
        return t;
      });
      return { refused: false, status, text };
    }
    const result = await run(db);
    const text = answerText(result);
    // A sealed copy is sealed and stored in one transaction (it holds the vault row shared: lockVault).
    if (claimId !== null && result.sealedFor) await db.transaction().execute(async (trx) => store.store(claimId, { status, body: await storedCopy(trx, result, text) }, trx));
    else if (claimId !== null) await store.store(claimId, { status, body: text });
    return { refused: false, status, text };
  } catch (e) {
    if (isApiError(e) && e.status < 500) {
      const text = serializeApiPayload(failure(e));
      // Input the logic found invalid claims no key, like the schema's validation: the client may
      // correct the body and send it again under the same key (nothing was written).
      if (claimId !== null && e.errortype === 'ValidationError') await store.release(claimId);
      else if (claimId !== null) await store.store(claimId, { status: e.status, body: text });
      // Mail queued by a refused action is never sent.
      return { refused: true, status: e.status, text };
    }
    if (claimId !== null) await store.release(claimId);
    throw e;
  }
}

function answerText(result: ActionResult): string {
  return serializeApiPayload(success(result.data, result.message ?? '', result.redirect !== undefined ? { redirect: result.redirect } : {}));
}

/** The effects of a committed run, in this order. */
async function afterCommit(services: Services, request: FastifyRequest, decision: AuthDecision | null, effects: Effects): Promise<void> {
  const { webSession, signInUserId, outbox } = effects;
  if (decision?.sessionWrite && webSession) await services.webSessions.saveData(webSession.id, webSession.data);
  if (signInUserId !== null) {
    const { cookieValue, session } = await services.webSessions.signIn(await request.webSession(), signInUserId);
    request.useWebSession(cookieValue, session);
  }
  if (outbox.length > 0) await sendMail(services, request, outbox);
}

async function sendMail(services: Services, request: FastifyRequest, outbox: MailMessage[]): Promise<void> {
  const mailer = mailerFromSettings(services.settings, services.db, services.clock);
  const sending = (async () => {
    for (const message of outbox) {
      try {
        await mailer.send(message);
      } catch (err) {
        request.log.error({ err, action: request.logAction, template: message.template }, 'outgoing mail failed');
      }
    }
  })();
  // SMTP goes out after the answer: its delay would tell a caller whether an address has an account
  // (password_reset_1 mails only real ones). The outbox table is a quick local write and stays in line.
  if (mailer instanceof OutboxMailer) await sending;
}
