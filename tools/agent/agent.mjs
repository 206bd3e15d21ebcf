#!/usr/bin/env node
// The reference agent of a managed node (docs/api/channels.md, the agent channel): plain Node, node:crypto for its Ed25519 key and
// signatures. It keeps its key in a state file (created 0600, written atomically), joins the management
// node, polls for jobs with backoff, runs the allowlisted kinds, reports results, and can leave.
//
//   node tools/agent/agent.mjs --server URL --state FILE [--name NAME] join|status|once|run|leave
//
// Every command prints one JSON object per line on stdout. The functions are exported for tests.
import { createHash, createPrivateKey, createPublicKey, generateKeyPairSync, randomBytes, sign } from 'node:crypto';
import { existsSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { pathToFileURL } from 'node:url';

export const AGENT_VERSION = '1.0.0';
export const MESSAGE_TAG = 'gatehouse-agent-v1';
export const AGENT_PATH = '/api/v1/agent';

/** The raw 32-byte public key sits at the end of an Ed25519 SubjectPublicKeyInfo (DER). */
function rawPublicKeyOf(publicKey) {
  return publicKey.export({ format: 'der', type: 'spki' }).subarray(-32);
}

/** As the server shows it: 'SHA256:' and the unpadded base64 of the raw key's SHA-256. */
export function fingerprintOf(rawPublicKey) {
  return `SHA256:${createHash('sha256').update(rawPublicKey).digest('base64').replace(/=+$/, '')}`;
}

function writeAtomically(file, text) {
  const tmp = path.join(path.dirname(file), `.${path.basename(file)}.${process.pid}.${randomBytes(4).toString('hex')}.tmp`);
  writeFileSync(tmp, text, { mode: 0o600 });
  renameSync(tmp, file);
}

function identityFrom(file, state) {
  const privateKey = createPrivateKey({ key: Buffer.from(state.private_key_pkcs8, 'base64'), format: 'der', type: 'pkcs8' });
  const raw = rawPublicKeyOf(createPublicKey(privateKey));
  return { file, privateKey, publicKey: raw.toString('base64'), fingerprint: fingerprintOf(raw), nodeId: state.node_id ?? null };
}

/** The agent's identity from its state file, or a new Ed25519 key written there (0600). */
export function loadOrCreateIdentity(file) {
  if (existsSync(file)) return identityFrom(file, JSON.parse(readFileSync(file, 'utf8')));
  const { privateKey } = generateKeyPairSync('ed25519');
  const state = { version: 1, private_key_pkcs8: privateKey.export({ format: 'der', type: 'pkcs8' }).toString('base64'), node_id: null };
  writeAtomically(file, `${JSON.stringify(state)}\n`);
  return identityFrom(file, state);
}

/** Remembers the node id the server gave this key. */
export function saveNodeId(identity, nodeId) {
  const state = JSON.parse(readFileSync(identity.file, 'utf8'));
  state.node_id = nodeId;
  writeAtomically(identity.file, `${JSON.stringify(state)}\n`);
  identity.nodeId = nodeId;
}

/** The seven-line message the server verifies. */
export function canonicalMessage({ method, path: p, nodeId, timestamp, nonce, body }) {
  const bodyHash = createHash('sha256').update(body).digest('hex');
  return [MESSAGE_TAG, method, p, String(nodeId), String(timestamp), nonce, bodyHash].join('\n');
}

/** A join is signed with node id 0: the node has no id until the join answers. */
export const JOIN_NODE_ID = 0;

/** The four headers of a signed request for `endpoint` with exactly these body bytes. */
export function signedHeaders(identity, endpoint, body, opts = {}) {
  const nodeId = endpoint === 'join' ? JOIN_NODE_ID : identity.nodeId;
  if (nodeId === null || nodeId === undefined) throw new Error('this agent has not joined yet');
  const nowMs = opts.nowMs ?? Date.now();
  const timestamp = Math.floor(nowMs / 1000);
  const nonce = opts.nonce ?? randomBytes(16).toString('base64url');
  const message = canonicalMessage({ method: 'POST', path: `${AGENT_PATH}/${endpoint}`, nodeId, timestamp, nonce, body });
  const signature = sign(null, Buffer.from(message, 'utf8'), identity.privateKey).toString('base64');
  return {
    'x-service-agent-node': String(nodeId),
    'x-service-agent-timestamp': String(timestamp),
    'x-service-agent-nonce': nonce,
    'x-service-agent-signature': signature,
  };
}

/** POSTs to the channel, signed; resolves { status, json }. `signed: false` sends no signature (tests). */
export async function agentRequest(server, identity, endpoint, payload, opts = {}) {
  const body = Buffer.from(opts.rawBody ?? JSON.stringify(payload ?? {}), 'utf8');
  const headers = { 'content-type': 'application/json', ...(opts.signed === false ? {} : signedHeaders(identity, endpoint, opts.signBody ?? body, opts)) };
  const res = await fetch(`${server.replace(/\/+$/, '')}${AGENT_PATH}/${endpoint}`, { method: 'POST', headers, body });
  let json = null;
  try {
    json = await res.json();
  } catch {
    json = null;
  }
  return { status: res.status, json };
}

export class AgentError extends Error {
  constructor(message, response) {
    super(message);
    this.response = response;
  }
}

function expectOk(what, res) {
  if (res.status !== 200) throw new AgentError(`${what}: HTTP ${res.status} ${res.json?.errortype ?? ''} ${res.json?.error ?? ''}`.trim(), res);
  return res.json.data;
}

/**
 * Joins with the public key, signed by its private key (node id 0) to prove possession; keeps the node id.
 * Joining again gives the same node.
 */
export async function join(server, identity, opts = {}) {
  const res = await agentRequest(server, identity, 'join', { claimed_name: opts.name ?? os.hostname(), agent_public_key: identity.publicKey, agent_version: AGENT_VERSION }, opts);
  const data = expectOk('join', res);
  saveNodeId(identity, data.node_id);
  return data;
}

export const joinStatus = async (server, identity, opts) => expectOk('join_status', await agentRequest(server, identity, 'join_status', {}, opts));
export const claim = async (server, identity, opts) => expectOk('claim', await agentRequest(server, identity, 'claim', {}, opts)).job;
export const postResult = async (server, identity, result, opts) => expectOk('result', await agentRequest(server, identity, 'result', result, opts));
export const leave = async (server, identity, opts) => expectOk('leave', await agentRequest(server, identity, 'leave', {}, opts));

/** The job kinds this agent runs; anything else is refused. */
export const JOB_HANDLERS = {
  health: async () => ({
    uptime_seconds: Math.round(os.uptime()),
    load: os.loadavg(),
    memory: { total_bytes: os.totalmem(), free_bytes: os.freemem() },
    agent_version: AGENT_VERSION,
  }),
};

/** Runs a claimed job: { job_id, status: completed|failed|refused, output }. */
export async function runJob(job) {
  const handler = Object.hasOwn(JOB_HANDLERS, job.kind) ? JOB_HANDLERS[job.kind] : undefined;
  if (!handler) return { job_id: job.job_id, status: 'refused', output: { reason: `kind '${job.kind}' is not allowlisted` } };
  try {
    return { job_id: job.job_id, status: 'completed', output: await handler(job.payload ?? {}) };
  } catch (e) {
    return { job_id: job.job_id, status: 'failed', output: { error: e instanceof Error ? e.message : String(e) } };
  }
}

/** One poll: claims a job, runs it and reports. Resolves the reported result, or null when there was none. */
export async function pollOnce(server, identity) {
  const job = await claim(server, identity);
  if (!job) return null;
  const result = await runJob(job);
  await postResult(server, identity, result);
  return result;
}

/** The wait after `idle` polls in a row that found nothing (or failed): doubling from min to max. */
export function backoffMs(idle, minMs = 1000, maxMs = 60_000) {
  return Math.min(maxMs, minMs * 2 ** Math.max(0, idle - 1));
}

/**
 * Polls until stopped: after a job at once again, after an empty poll or a failure with backoff. A node
 * not yet approved (403) keeps waiting; a refused signature (401) ends the loop.
 */
export async function pollLoop(server, identity, opts = {}) {
  const sleep = opts.sleep ?? ((ms) => new Promise((r) => setTimeout(r, ms)));
  const log = opts.log ?? (() => {});
  const stopped = opts.stopped ?? (() => false);
  let idle = 0;
  for (let polls = 0; !stopped() && (opts.maxPolls === undefined || polls < opts.maxPolls); polls++) {
    try {
      const result = await pollOnce(server, identity);
      if (result) {
        log({ event: 'job', ...result });
        idle = 0;
        continue;
      }
      idle++;
    } catch (e) {
      const status = e instanceof AgentError ? e.response.status : null;
      log({ event: 'error', status, error: e instanceof Error ? e.message : String(e) });
      if (status === 401) throw e;
      idle++;
    }
    await sleep(backoffMs(idle, opts.minDelayMs, opts.maxDelayMs));
  }
}

async function main(argv) {
  const { values, positionals } = parseArgs({
    args: argv,
    options: { server: { type: 'string' }, state: { type: 'string' }, name: { type: 'string' }, 'min-delay-ms': { type: 'string' }, 'max-delay-ms': { type: 'string' } },
    allowPositionals: true,
  });
  const command = positionals[0];
  if (!values.server || !values.state || !['join', 'status', 'once', 'run', 'leave'].includes(command ?? '')) {
    process.stderr.write('usage: agent.mjs --server URL --state FILE [--name NAME] join|status|once|run|leave\n');
    return 2;
  }
  const out = (o) => process.stdout.write(`${JSON.stringify(o)}\n`);
  const identity = loadOrCreateIdentity(values.state);
  if (command === 'join') out({ ...(await join(values.server, identity, { name: values.name })), local_fingerprint: identity.fingerprint });
  else if (command === 'status') out(await joinStatus(values.server, identity));
  else if (command === 'once') out({ result: await pollOnce(values.server, identity) });
  else if (command === 'leave') out(await leave(values.server, identity));
  else {
    let stop = false;
    process.once('SIGTERM', () => (stop = true));
    process.once('SIGINT', () => (stop = true));
    await pollLoop(values.server, identity, {
      log: out,
      stopped: () => stop,
      minDelayMs: values['min-delay-ms'] ? Number(values['min-delay-ms']) : undefined,
      maxDelayMs: values['max-delay-ms'] ? Number(values['max-delay-ms']) : undefined,
    });
  }
  return 0;
}

if (process.argv[1] && import.meta.url === pathToFileURL(path.resolve(process.argv[1])).href) {
  main(process.argv.slice(2)).then(
    (code) => process.exit(code),
    (e) => {
      process.stderr.write(`agent: ${e instanceof Error ? e.message : String(e)}\n`);
      process.exit(1);
    },
  );
}
