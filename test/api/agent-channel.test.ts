import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Validator } from '@seriousme/openapi-schema-validator';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { findNodeJob, queueNodeJob } from '../../src/plugins/server_management/jobs.js';
import { findNode, setNodeStatus } from '../../src/plugins/server_management/nodes.js';
import * as agent from '../../tools/agent/agent.mjs';
import { onPostgres } from '../helpers/database.js';
import { createTestApp, type TestApp } from '../helpers/app.js';

const ENDPOINTS = ['join', 'join_status', 'claim', 'result', 'leave'] as const;

/** A test app with the plugin active, listening on a port so the reference agent talks HTTP to it. */
async function listeningApp(opts: { active?: boolean; settings?: Record<string, unknown> } = {}): Promise<{ t: TestApp; server: string }> {
  const t = await createTestApp({ start: new Date(), activePlugins: opts.active === false ? [] : ['server_management'], ...(opts.settings ? { settings: opts.settings } : {}) });
  await t.app.listen({ port: 0, host: '127.0.0.1' });
  const address = t.app.server.address();
  if (typeof address !== 'object' || !address) throw new Error('not listening');
  return { t, server: `http://127.0.0.1:${address.port}` };
}

const dir = mkdtempSync(path.join(os.tmpdir(), 'gh-agent-'));
let seq = 0;
const newIdentity = () => agent.loadOrCreateIdentity(path.join(dir, `agent-${++seq}.json`));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** A node that joined and was approved (as `gatehouse node approve` does). */
async function approvedAgent(t: TestApp, server: string, name = 'web-1') {
  const identity = newIdentity();
  const joined = await agent.join(server, identity, { name });
  await setNodeStatus(t.services.db, joined.node_id, 'approve', t.clock.now());
  return identity;
}

describe('agent channel (plugin server_management active)', () => {
  let t: TestApp;
  let server: string;
  beforeAll(async () => {
    ({ t, server } = await listeningApp());
  });
  afterAll(async () => t?.close());

  it('join → pending with the fingerprint the agent computes; the same key joins as the same node; only the public key is stored', async () => {
    const identity = newIdentity();
    const first = await agent.join(server, identity, { name: 'db-1' });
    expect(first).toEqual({ node_id: expect.any(Number), status: 'pending', fingerprint: identity.fingerprint });
    expect(identity.fingerprint).toMatch(/^SHA256:[A-Za-z0-9+/]{43}$/);
    const again = await agent.join(server, identity, { name: 'db-1-renamed' });
    expect(again).toEqual(first);
    const node = await findNode(t.services.db, first.node_id);
    expect(node).toMatchObject({ claimedName: 'db-1-renamed', publicKey: identity.publicKey, status: 'pending', agentVersion: agent.AGENT_VERSION });

    const status = await agent.joinStatus(server, identity);
    expect(status).toEqual({ node_id: first.node_id, status: 'pending', fingerprint: identity.fingerprint });
  });

  it('a node not approved gets 403 on claim, result and leave; after approval the reference agent claims, runs health and reports', async () => {
    const identity = newIdentity();
    const { node_id } = await agent.join(server, identity, { name: 'app-1' });
    for (const endpoint of ['claim', 'leave'] as const) {
      const res = await agent.agentRequest(server, identity, endpoint, {});
      expect(res.status, endpoint).toBe(403);
      expect(res.json.errortype).toBe('AuthenticationError');
    }
    const res = await agent.agentRequest(server, identity, 'result', { job_id: 1, status: 'completed' });
    expect(res.status).toBe(403);

    await setNodeStatus(t.services.db, node_id, 'approve', t.clock.now());
    expect((await agent.joinStatus(server, identity)).status).toBe('approved');
    expect(await agent.pollOnce(server, identity)).toBeNull();

    const job = await queueNodeJob(t.services.db, { nodeId: node_id, kind: 'health', payload: {}, now: t.clock.now() });
    const result = await agent.pollOnce(server, identity);
    expect(result).toMatchObject({ job_id: job.job_id, status: 'completed' });
    expect(result!.output).toMatchObject({ uptime_seconds: expect.any(Number), load: expect.any(Array), memory: { total_bytes: expect.any(Number), free_bytes: expect.any(Number) } });
    const stored = await findNodeJob(t.services.db, job.job_id);
    expect(stored).toMatchObject({ smj_status: 'completed', smj_result: { uptime_seconds: result!.output.uptime_seconds } });
    expect(Number(stored!.smj_claimed_by_smn_managed_node_id)).toBe(node_id);

    // A kind outside the agent's allowlist is refused by the agent and recorded as such.
    const other = await queueNodeJob(t.services.db, { nodeId: node_id, kind: 'reboot', payload: { now: true }, now: t.clock.now() });
    expect(await agent.pollOnce(server, identity)).toMatchObject({ job_id: other.job_id, status: 'refused' });
    expect((await findNodeJob(t.services.db, other.job_id))!.smj_status).toBe('refused');

    // A result only once, and only for a job this node holds.
    const again = await agent.agentRequest(server, identity, 'result', { job_id: job.job_id, status: 'failed' });
    expect(again.status).toBe(409);
    expect(again.json.errortype).toBe('ActionError');
    const stranger = await approvedAgent(t, server, 'stranger');
    const foreign = await agent.agentRequest(server, stranger, 'result', { job_id: job.job_id, status: 'failed' });
    expect(foreign.status).toBe(404);
    expect(foreign.json.errortype).toBe('NotFound');
  });

  it('refuses a wrong key, a skewed clock, a tampered body, an unknown node and a replayed nonce with 401', async () => {
    const identity = await approvedAgent(t, server);
    const expect401 = (res: agent.AgentResponse, why: string) => {
      expect(res.status, why).toBe(401);
      expect(res.json.errortype, why).toBe('AuthenticationError');
    };
    // The same node id, signed by another key.
    const impostor = newIdentity();
    impostor.nodeId = identity.nodeId;
    expect401(await agent.agentRequest(server, impostor, 'claim', {}), 'wrong key');

    const now = t.clock.nowMs();
    expect401(await agent.agentRequest(server, identity, 'claim', {}, { nowMs: now + 301_000 }), 'clock ahead');
    expect401(await agent.agentRequest(server, identity, 'claim', {}, { nowMs: now - 301_000 }), 'clock behind');
    expect((await agent.agentRequest(server, identity, 'claim', {}, { nowMs: now - 299_000 })).status).toBe(200);

    const signed = Buffer.from(JSON.stringify({ job_id: 1, status: 'completed' }));
    expect401(await agent.agentRequest(server, identity, 'result', { job_id: 2, status: 'completed' }, { signBody: signed }), 'tampered body');

    const ghost = newIdentity();
    ghost.nodeId = 987654;
    expect401(await agent.agentRequest(server, ghost, 'claim', {}), 'unknown node');

    const nonce = 'fixed-nonce-0123456789';
    expect((await agent.agentRequest(server, identity, 'join_status', {}, { nonce })).status).toBe(200);
    expect401(await agent.agentRequest(server, identity, 'join_status', {}, { nonce }), 'replayed nonce');

    // A signature for one endpoint is not good for another (the path is signed).
    const headers = agent.signedHeaders(identity, 'join_status', Buffer.from('{}'));
    const moved = await fetch(`${server}/api/v1/agent/claim`, { method: 'POST', headers: { ...headers, 'content-type': 'application/json' }, body: '{}' });
    expect(moved.status).toBe(401);

    const bare = await fetch(`${server}/api/v1/agent/claim`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' });
    expect(bare.status).toBe(401);
    expect(((await bare.json()) as { errortype: string }).errortype).toBe('AuthenticationError');
  });

  it('join is signed by the key it joins with: unsigned, signed by another key, or replayed is 401, and nobody else renames a node', async () => {
    const identity = await approvedAgent(t, server, 'web-approved');
    const body = { claimed_name: 'renamed by a stranger', agent_public_key: identity.publicKey, agent_version: '9.9.9' };
    const unsigned = await agent.agentRequest(server, identity, 'join', body, { signed: false });
    expect([unsigned.status, unsigned.json.errortype]).toEqual([401, 'AuthenticationError']);
    // The key in the body, a signature by another key.
    const stranger = newIdentity();
    const forged = await agent.agentRequest(server, stranger, 'join', body);
    expect([forged.status, forged.json.errortype]).toEqual([401, 'AuthenticationError']);
    // A join signed for another node id than 0, and one signed over another body.
    const asNode = agent.signedHeaders({ ...identity, nodeId: identity.nodeId }, 'join_status', Buffer.from(JSON.stringify(body)));
    const moved = await fetch(`${server}/api/v1/agent/join`, { method: 'POST', headers: { ...asNode, 'content-type': 'application/json' }, body: JSON.stringify(body) });
    expect(moved.status).toBe(401);
    const tampered = await agent.agentRequest(server, identity, 'join', body, { signBody: Buffer.from(JSON.stringify({ ...body, claimed_name: 'web-approved' })) });
    expect(tampered.status).toBe(401);
    expect(await findNode(t.services.db, identity.nodeId!)).toMatchObject({ claimedName: 'web-approved', status: 'approved', agentVersion: agent.AGENT_VERSION });

    const nonce = 'join-nonce-0123456789';
    const own = { ...body, claimed_name: 'web-approved-2' };
    expect((await agent.agentRequest(server, identity, 'join', own, { nonce })).status).toBe(200);
    const replayed = await agent.agentRequest(server, identity, 'join', own, { nonce });
    expect([replayed.status, replayed.json.errortype]).toEqual([401, 'AuthenticationError']);
    expect((await findNode(t.services.db, identity.nodeId!))!.claimedName).toBe('web-approved-2');
  });

  it('stores a key in one spelling: another base64 spelling joins as the same node, and a revoked key never joins again in any spelling', async () => {
    const identity = newIdentity();
    const first = await agent.join(server, identity, { name: 'spelled' });
    // 32 bytes are 43 base64 characters and two spare bits: flipping one gives another spelling of the key.
    const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/';
    const last = identity.publicKey[42]!;
    const respelled = `${identity.publicKey.slice(0, 42)}${alphabet[alphabet.indexOf(last) ^ 1]}=`;
    expect(respelled).not.toBe(identity.publicKey);
    expect(Buffer.from(respelled, 'base64').equals(Buffer.from(identity.publicKey, 'base64'))).toBe(true);
    const again = await agent.agentRequest(server, identity, 'join', { claimed_name: 'spelled', agent_public_key: respelled, agent_version: '1' });
    expect([again.status, again.json.data]).toEqual([200, first]);
    const rows = await t.services.db
      .selectFrom('smn_managed_nodes' as never)
      .select(['smn_managed_node_id', 'smn_public_key'] as never)
      .where('smn_fingerprint' as never, '=', identity.fingerprint as never)
      .execute();
    expect(rows).toEqual([{ smn_managed_node_id: expect.anything(), smn_public_key: identity.publicKey }]);

    await setNodeStatus(t.services.db, first.node_id, 'revoke', t.clock.now());
    for (const spelling of [identity.publicKey, respelled]) {
      const refused = await agent.agentRequest(server, identity, 'join', { claimed_name: 'back', agent_public_key: spelling, agent_version: '1' });
      expect([spelling, refused.status, refused.json.errortype]).toEqual([spelling, 403, 'AuthenticationError']);
    }
    const after = await t.services.db.selectFrom('smn_managed_nodes' as never).select('smn_status' as never).where('smn_fingerprint' as never, '=', identity.fingerprint as never).execute();
    expect(after).toEqual([{ smn_status: 'revoked' }]);
  });

  it('a body over 256 KiB is 400 ValidationError; undeclared fields are 422 ValidationError', async () => {
    const identity = await approvedAgent(t, server);
    const big = JSON.stringify({ pad: 'x'.repeat(256 * 1024) });
    for (const res of [
      await agent.agentRequest(server, identity, 'claim', {}, { rawBody: big }),
      await agent.agentRequest(server, identity, 'join', {}, { rawBody: big, signed: false }),
    ]) {
      expect(res.status).toBe(400);
      expect(res.json.errortype).toBe('ValidationError');
    }
    // Exactly at the cap is read (and then refused for its undeclared field, not its size).
    const atCap = JSON.stringify({ pad: 'x'.repeat(256 * 1024 - 10) });
    expect(Buffer.byteLength(atCap)).toBe(256 * 1024);
    expect((await agent.agentRequest(server, identity, 'claim', {}, { rawBody: atCap })).status).toBe(422);

    const extra = await agent.agentRequest(server, identity, 'claim', { extra: 1 });
    expect(extra.status).toBe(422);
    expect(extra.json.errortype).toBe('ValidationError');
    expect(extra.json.validation_errors).toEqual({ extra: 'is not a field of this endpoint' });

    const joiner = newIdentity();
    const joinExtra = await agent.agentRequest(server, joiner, 'join', { claimed_name: 'x', agent_public_key: joiner.publicKey, agent_version: '1', admin: true });
    expect(joinExtra.status).toBe(422);
    expect(joinExtra.json.validation_errors).toEqual({ admin: 'is not a field of this endpoint' });

    const badKey = await agent.agentRequest(server, newIdentity(), 'join', { claimed_name: 'x', agent_public_key: 'AAAA', agent_version: '1' });
    expect(badKey.status).toBe(422);
    expect(Object.keys(badKey.json.validation_errors)).toEqual(['agent_public_key']);

    const badResult = await agent.agentRequest(server, identity, 'result', { job_id: 1, status: 'done' });
    expect(badResult.status).toBe(422);
    expect(Object.keys(badResult.json.validation_errors)).toEqual(['status']);
  });

  it('leave: the node is gone from work (403 afterwards); a revoked node cannot join its way back', async () => {
    const identity = await approvedAgent(t, server);
    expect(await agent.leave(server, identity)).toEqual({ node_id: identity.nodeId, status: 'left' });
    expect((await agent.agentRequest(server, identity, 'claim', {})).status).toBe(403);
    expect((await agent.join(server, identity)).status).toBe('pending');

    const revoked = await approvedAgent(t, server);
    await setNodeStatus(t.services.db, revoked.nodeId!, 'revoke', t.clock.now());
    expect((await agent.agentRequest(server, revoked, 'claim', {})).status).toBe(403);
    const rejoined = await agent.agentRequest(server, revoked, 'join', { claimed_name: 'back again', agent_public_key: revoked.publicKey, agent_version: '1' });
    expect([rejoined.status, rejoined.json.errortype]).toEqual([403, 'AuthenticationError']);
  });

  it('polls with backoff: doubling while idle, back to the shortest wait after a job', async () => {
    const identity = await approvedAgent(t, server);
    const waits: number[] = [];
    const log: Array<Record<string, unknown>> = [];
    let polls = 0;
    await agent.pollLoop(server, identity, {
      minDelayMs: 100,
      maxDelayMs: 400,
      maxPolls: 6,
      log: (e) => log.push(e),
      sleep: async (ms) => {
        waits.push(ms);
        if (++polls === 4) await queueNodeJob(t.services.db, { nodeId: identity.nodeId, kind: 'health', now: t.clock.now() });
      },
    });
    // Idle, idle, idle, idle (job queued during the 4th wait), job (no wait), idle.
    expect(waits).toEqual([100, 200, 400, 400, 100]);
    expect(log).toEqual([expect.objectContaining({ event: 'job', status: 'completed' })]);
  });

  it('GET /management/nodes lists nodes, last contact and job counts (machine key of a superadmin)', async () => {
    const identity = await approvedAgent(t, server, 'listed');
    await queueNodeJob(t.services.db, { nodeId: identity.nodeId, kind: 'health', now: t.clock.now() });
    await queueNodeJob(t.services.db, { nodeId: identity.nodeId, kind: 'health', now: t.clock.now() });
    await agent.pollOnce(server, identity);

    const admin = await t.staffHeaders({ userPermission: 10 });
    const res = await t.request({ method: 'GET', url: '/api/v1/management/nodes', headers: admin.headers });
    expect(res.statusCode).toBe(200);
    const entry = res.json.data.nodes.find((n: { node_id: number }) => n.node_id === identity.nodeId);
    expect(entry).toMatchObject({ claimed_name: 'listed', status: 'approved', fingerprint: identity.fingerprint, jobs: { pending: 1, claimed: 0, completed: 1, failed: 0, refused: 0 } });
    expect(entry.last_contact_time).toMatch(/^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}$/);
    expect(res.json.data.count).toBe(res.json.data.nodes.length);
    expect(JSON.stringify(res.json.data)).not.toContain(identity.publicKey);

    const root = await t.request({ method: 'GET', url: '/api/v1/management', headers: admin.headers });
    expect(root.json.data.endpoints.map((e: { path: string }) => e.path)).toContain('/management/nodes');

    const staff = await t.staffHeaders({ userPermission: 5 });
    const low = await t.request({ method: 'GET', url: '/api/v1/management/nodes', headers: staff.headers });
    expect(low.statusCode).toBe(403);
    expect(low.json.errortype).toBe('AuthenticationError');
  });

  it(`concurrent claims from two nodes never share a job (${onPostgres ? 'PostgreSQL' : 'PGlite'})`, async () => {
    const a = await approvedAgent(t, server, 'racer-a');
    const b = await approvedAgent(t, server, 'racer-b');
    const queued: number[] = [];
    for (let i = 0; i < 30; i++) queued.push((await queueNodeJob(t.services.db, { nodeId: null, kind: 'health', payload: { i }, now: t.clock.now() })).job_id);
    for (let i = 0; i < 5; i++) queued.push((await queueNodeJob(t.services.db, { nodeId: a.nodeId, kind: 'health', payload: { i }, now: t.clock.now() })).job_id);
    const claims = await Promise.all(Array.from({ length: 50 }, (_, i) => agent.claim(server, i % 2 === 0 ? a : b)));
    const taken = claims.filter((j) => j !== null).map((j) => j!.job_id);
    expect(new Set(taken).size).toBe(taken.length);
    expect([...taken].sort((x, y) => x - y)).toEqual(queued);
    // b never took a's own jobs.
    const bJobs = claims.filter((j, i) => j !== null && i % 2 === 1).map((j) => j!.job_id);
    expect(bJobs.filter((id) => queued.indexOf(id) >= 30)).toEqual([]);
  });
});

describe('agent bucket api_agent: every request counts except a successful claim', () => {
  let t: TestApp;
  let server: string;
  beforeAll(async () => {
    ({ t, server } = await listeningApp());
  });
  afterAll(async () => t?.close());

  it('idle successful claims are free; other calls and failed claims fill the bucket, then 429', async () => {
    const identity = newIdentity();
    await agent.join(server, identity); // 1
    await setNodeStatus(t.services.db, identity.nodeId!, 'approve', t.clock.now());
    await t.services.settings.set('api_agent_rate_limit_requests', 4);
    for (let i = 0; i < 10; i++) expect((await agent.agentRequest(server, identity, 'claim', {})).status).toBe(200);
    expect((await agent.agentRequest(server, identity, 'join_status', {})).status).toBe(200); // 2
    expect((await agent.agentRequest(server, identity, 'claim', { bad: 1 })).status).toBe(422); // 3
    expect((await agent.agentRequest(server, identity, 'join_status', {})).status).toBe(200); // 4
    const limited = await agent.agentRequest(server, identity, 'join_status', {});
    expect(limited.status).toBe(429);
    expect(limited.json.errortype).toBe('RateLimitError');
    expect(limited.json.data).toMatchObject({ limit: 4, window_seconds: 3600, count: 4 });
    expect((await agent.agentRequest(server, identity, 'claim', {})).status).toBe(429);
    // The general bucket is untouched by the channel.
    expect((await t.request({ method: 'GET', url: '/api/v1/management' })).statusCode).not.toBe(429);
  });
});

describe('agent channel while server_management is inactive', () => {
  let t: TestApp;
  let server: string;
  beforeAll(async () => {
    ({ t, server } = await listeningApp({ active: false }));
  });
  afterAll(async () => t?.close());

  it('every agent path and /management/nodes answer as unknown', async () => {
    const unknown = await t.request({ method: 'POST', url: '/api/v1/agent/elsewhere', payload: {} });
    expect(unknown.statusCode).toBe(404);
    for (const endpoint of ENDPOINTS) {
      const res = await t.request({ method: 'POST', url: `/api/v1/agent/${endpoint}`, payload: {} });
      expect(res.statusCode, endpoint).toBe(404);
      expect(res.json).toEqual({ ...unknown.json, error: unknown.json.error.replace('/agent/elsewhere', `/agent/${endpoint}`) });
    }
    const identity = newIdentity();
    const join = await agent.agentRequest(server, identity, 'join', { claimed_name: 'x', agent_public_key: identity.publicKey, agent_version: '1' }, { signed: false });
    expect(join.status).toBe(404);

    const admin = await t.staffHeaders({ userPermission: 10 });
    const nodes = await t.request({ method: 'GET', url: '/api/v1/management/nodes', headers: admin.headers });
    const missing = await t.request({ method: 'GET', url: '/api/v1/management/nowhere', headers: admin.headers });
    expect(nodes.statusCode).toBe(404);
    expect(nodes.json.errortype).toBe(missing.json.errortype);
    const root = await t.request({ method: 'GET', url: '/api/v1/management', headers: admin.headers });
    expect(root.json.data.endpoints.map((e: { path: string }) => e.path)).not.toContain('/management/nodes');

    const before = (await t.request({ method: 'GET', url: '/api/openapi.json' })).json;
    expect(Object.keys(before.paths).filter((p) => p.startsWith('/agent/') || p === '/management/nodes')).toEqual([]);

    // Switched on, the same paths answer, and the API document shows them (and still validates).
    await t.services.plugins.setActive('server_management', true);
    const after = (await t.request({ method: 'GET', url: '/api/openapi.json' })).json;
    for (const endpoint of ENDPOINTS) expect(after.paths[`/agent/${endpoint}`]?.post, endpoint).toBeDefined();
    expect(after.paths['/agent/claim'].post.parameters.map((p: { name?: string }) => p.name)).toContain('X-Service-Agent-Signature');
    expect(after.paths['/management/nodes']?.get).toBeDefined();
    const validation = await new Validator().validate(after as never);
    expect(validation.errors ?? []).toEqual([]);

    expect((await agent.agentRequest(server, identity, 'join', { claimed_name: 'x', agent_public_key: identity.publicKey, agent_version: '1' })).status).toBe(200);
    expect((await t.request({ method: 'GET', url: '/api/v1/management/nodes', headers: admin.headers })).statusCode).toBe(200);
  });
});
