import type { FastifyInstance, FastifyRequest } from 'fastify';
import { success } from '../../http/envelope.js';
import { ApiError, authError, notFound, actionError } from '../../http/errors.js';
import { RateLimitBucket, settingsLimits } from '../../http/rate-limit/bucket.js';
import type { Services } from '../../services.js';
import { strictBody, type BodySpec } from './body.js';
import { claimNodeJob, MAX_JOB_JSON_BYTES, recordJobResult, RESULT_STATUSES, type ResultStatus } from './jobs.js';
import { findNode, joinNode, setNodeStatus, touchNode, useNonce, type ManagedNode } from './nodes.js';
import { canonicalPublicKey, fingerprint, MAX_SKEW_SECONDS, rawPublicKey, verifySignature } from './signature.js';

/** Every agent request body is at most this; a larger one is 400 ValidationError before anything else is read. */
export const AGENT_BODY_LIMIT = 256 * 1024;
/** The API prefix the signed path carries (the front controller's scope). */
export const AGENT_PATH_PREFIX = '/api/v1/agent';
const BUCKET_WINDOW_SECONDS = 3600;

const HEADER_NODE = 'x-service-agent-node';
const HEADER_TIMESTAMP = 'x-service-agent-timestamp';
const HEADER_NONCE = 'x-service-agent-nonce';
const HEADER_SIGNATURE = 'x-service-agent-signature';

const BODIES = {
  join: {
    claimed_name: { type: 'string', required: true, minLength: 1, maxLength: 100 },
    agent_public_key: { type: 'string', required: true, minLength: 1, maxLength: 100 },
    agent_version: { type: 'string', required: true, minLength: 1, maxLength: 40 },
  },
  join_status: {},
  claim: {},
  result: {
    job_id: { type: 'id', required: true },
    status: { type: 'enum', required: true, values: RESULT_STATUSES },
    output: { type: 'object', required: false, maxBytes: MAX_JOB_JSON_BYTES },
  },
  leave: {},
} satisfies Record<string, BodySpec>;

type Endpoint = keyof typeof BODIES;

function header(request: FastifyRequest, name: string): string | null {
  const v = request.headers[name];
  return typeof v === 'string' ? v : null;
}

/** A join is signed with node id 0: the node has no id until the join answers. */
export const JOIN_NODE_ID = '0';

interface SignatureHeaders {
  nodeId: string;
  timestamp: string;
  nonce: string;
  signature: string;
  sentMs: number;
}

/**
 * The four signature headers, present, well formed, and with a timestamp within MAX_SKEW_SECONDS of the
 * server's clock; otherwise 401 AuthenticationError. `join` carries node id 0, every other call its own.
 */
function signatureHeaders(services: Services, request: FastifyRequest, endpoint: Endpoint): SignatureHeaders {
  const nodeId = header(request, HEADER_NODE);
  const timestamp = header(request, HEADER_TIMESTAMP);
  const nonce = header(request, HEADER_NONCE);
  const signature = header(request, HEADER_SIGNATURE);
  if (nodeId === null || timestamp === null || nonce === null || signature === null) {
    throw authError(401, 'Agent requests carry X-Service-Agent-Node, -Timestamp, -Nonce and -Signature');
  }
  const nodeIdShape = endpoint === 'join' ? /^0$/ : /^[1-9]\d{0,15}$/;
  if (!nodeIdShape.test(nodeId) || !/^\d{1,12}$/.test(timestamp) || !/^[A-Za-z0-9_-]{16,64}$/.test(nonce)) {
    throw authError(401, 'Malformed agent signature headers');
  }
  const sentMs = Number(timestamp) * 1000;
  if (Math.abs(services.clock.nowMs() - sentMs) > MAX_SKEW_SECONDS * 1000) throw authError(401, `The request's timestamp is more than ${MAX_SKEW_SECONDS} seconds from the server's clock`);
  return { nodeId, timestamp, nonce, signature, sentMs };
}

/** Whether the headers' signature is `publicKey`'s over the canonical message of this request. */
function signedBy(publicKey: string, h: SignatureHeaders, endpoint: Endpoint, body: Buffer): boolean {
  const path = `${AGENT_PATH_PREFIX}/${endpoint}`;
  return verifySignature(publicKey, { method: 'POST', path, nodeId: h.nodeId, timestamp: h.timestamp, nonce: h.nonce, body }, h.signature);
}

/** How long a nonce is remembered: past the latest moment its timestamp is still accepted. */
const nonceExpiry = (h: SignatureHeaders) => new Date(h.sentMs + (MAX_SKEW_SECONDS + 1) * 1000);

/**
 * The node that signed this request, or 401 AuthenticationError: the signature headers (above), a known
 * node, a valid Ed25519 signature over the canonical message for this endpoint's fixed path, and a nonce
 * the node has not used within the window.
 */
async function verifiedNode(services: Services, request: FastifyRequest, endpoint: Endpoint, body: Buffer): Promise<ManagedNode> {
  const h = signatureHeaders(services, request, endpoint);
  const node = await findNode(services.db, Number(h.nodeId));
  // An unknown node and a bad signature get the same answer.
  if (!node || !signedBy(node.publicKey, h, endpoint, body)) throw authError(401, 'Agent signature verification failed');
  const fresh = await useNonce(services.db, node.id, h.nonce, services.clock.now(), nonceExpiry(h));
  if (!fresh) throw authError(401, 'This nonce was already used');
  await touchNode(services.db, node.id, request.ip, services.clock.now());
  return node;
}

function requireApproved(node: ManagedNode): void {
  if (node.status !== 'approved') throw authError(403, `This node is ${node.status}; a superadmin must approve it first`);
}

function rawBody(request: FastifyRequest): Buffer {
  return Buffer.isBuffer(request.body) ? request.body : Buffer.alloc(0);
}

/**
 * POST /agent/{join,join_status,claim,result,leave} (DESIGN 12): a special channel dispatched before key
 * authentication. The body is kept as raw bytes (the signature covers its SHA-256), capped at 256 KiB.
 * Metered by the api_agent bucket per IP: every request counts except a successful claim (idle agents
 * poll; failed claims still count).
 */
export async function agentChannel(api: FastifyInstance, services: Services): Promise<void> {
  const bucket = new RateLimitBucket('api_agent', services.rateLimitStore, services.clock, settingsLimits(services.settings, 'api_agent_rate_limit_requests', BUCKET_WINDOW_SECONDS));
  const isClaim = (request: FastifyRequest) => request.routeOptions.url === `${AGENT_PATH_PREFIX}/claim`;

  api.removeAllContentTypeParsers();
  api.addContentTypeParser('*', { parseAs: 'buffer', bodyLimit: AGENT_BODY_LIMIT }, (_req, body, done) => done(null, body));
  api.setErrorHandler((error, _request, _reply) => {
    if ((error as { code?: string }).code === 'FST_ERR_CTP_BODY_TOO_LARGE') {
      throw new ApiError(400, 'ValidationError', `The body is larger than ${AGENT_BODY_LIMIT} bytes`, { validationErrors: { body: `at most ${AGENT_BODY_LIMIT} bytes` } });
    }
    throw error;
  });
  // A claim is counted only when it fails: checked on the way in, recorded on the way out.
  api.addHook('onSend', async (request, reply) => {
    if (isClaim(request) && reply.statusCode >= 400 && reply.statusCode !== 429) await bucket.record(request.ip);
  });

  const config = {
    feature: 'agent' as const,
    auth: 'none' as const,
    meter: (request: FastifyRequest) => (isClaim(request) ? bucket.check(request.ip) : bucket.consume(request.ip)),
  };
  const route = (endpoint: Endpoint, handle: (request: FastifyRequest, raw: Buffer) => Promise<unknown>) =>
    api.post(`/agent/${endpoint}`, { config, bodyLimit: AGENT_BODY_LIMIT }, async (request) => {
      request.logAction = `agent/${endpoint}`;
      return handle(request, rawBody(request));
    });

  // A join proves possession of the key it joins with: signed like every other call, by the key in its
  // body, with node id 0. The key is stored in one spelling; a revoked key never joins again.
  route('join', async (request, raw) => {
    const h = signatureHeaders(services, request, 'join');
    const body = strictBody(raw, BODIES.join) as { claimed_name: string; agent_public_key: string; agent_version: string };
    const key = rawPublicKey(body.agent_public_key);
    if (!key) throw new ApiError(422, 'ValidationError', 'Input validation failed', { validationErrors: { agent_public_key: 'must be the base64 of a raw 32-byte Ed25519 public key' } });
    const publicKey = canonicalPublicKey(key);
    if (!signedBy(publicKey, h, 'join', raw)) throw authError(401, 'Agent signature verification failed');
    const node = await services.db.transaction().execute(async (trx) => {
      const joined = await joinNode(trx, {
        claimedName: body.claimed_name.trim(),
        publicKey,
        fingerprint: fingerprint(key),
        agentVersion: body.agent_version.trim(),
        ip: request.ip,
        now: services.clock.now(),
      });
      if (joined === 'revoked') throw authError(403, 'This key was revoked: make a new key and join with it');
      if (!(await useNonce(trx, joined.id, h.nonce, services.clock.now(), nonceExpiry(h)))) throw authError(401, 'This nonce was already used');
      return joined;
    });
    return success({ node_id: node.id, status: node.status, fingerprint: node.fingerprint }, node.status === 'pending' ? 'Waiting for approval.' : `Node is ${node.status}.`);
  });

  route('join_status', async (request, raw) => {
    const node = await verifiedNode(services, request, 'join_status', raw);
    strictBody(raw, BODIES.join_status);
    return success({ node_id: node.id, status: node.status, fingerprint: node.fingerprint });
  });

  route('claim', async (request, raw) => {
    const node = await verifiedNode(services, request, 'claim', raw);
    requireApproved(node);
    strictBody(raw, BODIES.claim);
    const job = await claimNodeJob(services.db, node.id, services.clock.now());
    return success({ job }, job ? 'Job claimed.' : 'No job.');
  });

  route('result', async (request, raw) => {
    const node = await verifiedNode(services, request, 'result', raw);
    requireApproved(node);
    const body = strictBody(raw, BODIES.result) as { job_id: number; status: ResultStatus; output?: Record<string, unknown> };
    const outcome = await recordJobResult(services.db, { nodeId: node.id, jobId: body.job_id, status: body.status, output: body.output ?? {}, now: services.clock.now() });
    if (!outcome.ok && outcome.reason === 'unknown_job') throw notFound(`No job ${body.job_id} claimed by this node`);
    if (!outcome.ok) throw actionError(409, `Job ${body.job_id} already has its result`, { reason: 'already_reported' });
    return success({ job_id: body.job_id, status: body.status }, 'Result recorded.');
  });

  route('leave', async (request, raw) => {
    const node = await verifiedNode(services, request, 'leave', raw);
    requireApproved(node);
    strictBody(raw, BODIES.leave);
    const left = await setNodeStatus(services.db, node.id, 'leave', services.clock.now());
    return success({ node_id: left.id, status: left.status }, 'Node left.');
  });
}
