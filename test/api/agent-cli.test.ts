import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { onPostgres } from '../helpers/database.js';
import {
  ROOT,
  freePort,
  pollUntil,
  programEnv,
  runGatehouse,
  runNodeScript,
  scratchPostgres,
  startServerProcess,
  tempDataDir,
  type CliResult,
  type ServerProcess,
} from '../helpers/processes.js';

const AGENT = path.join(ROOT, 'tools', 'agent', 'agent.mjs');

// The operator's side (`npx gatehouse node ...`) and the agent's side (the reference agent as a process)
// against a running server: on PGlite the commands reach its database through the server's socket, on
// PostgreSQL the server and the commands share a fresh database.
describe(`node commands and the reference agent against a running server (${onPostgres ? 'PostgreSQL' : 'PGlite'})`, { timeout: 120_000 }, () => {
  let env: NodeJS.ProcessEnv;
  let server: ServerProcess;
  let cleanup: () => Promise<void>;
  let data: { dir: string; remove(): void };
  const cli = (...args: string[]): Promise<CliResult> => runGatehouse(args, env);
  // The reference agent as its own process: `node tools/agent/agent.mjs --server URL --state FILE ...`.
  const agent = (...args: string[]) => runNodeScript(AGENT, ['--server', server.url, '--state', path.join(data.dir, 'agent-state.json'), ...args], programEnv({}));
  let nodeId: number;

  beforeAll(async () => {
    data = tempDataDir('gh-agent-cli-');
    const db = onPostgres ? await scratchPostgres() : null;
    env = programEnv({ DATA_DIR: data.dir, PORT: String(await freePort()), DATABASE_URL: db?.url });
    server = await startServerProcess(env);
    cleanup = async () => {
      await server?.stop();
      await db?.drop();
      data.remove();
    };
  }, 200_000);
  afterAll(async () => cleanup?.());

  it('node commands refuse while the plugin is inactive (exit 2), and the agent paths are unknown', async () => {
    const r = await cli('node', 'list');
    expect(r.code, r.stderr).toBe(2);
    expect(r.stderr).toMatch(/plugin server_management is not active/);
    expect((await cli('setting', 'set', 'api_require_https', 'false')).code).toBe(0);
    const joined = await pollUntil(async () => {
      const res = await agent('join');
      return res.stderr.includes('HTTP 426') ? undefined : res;
    }, 10_000);
    expect(joined?.code).toBe(1);
    expect(joined?.stderr).toMatch(/join: HTTP 404 NotFound/);
  });

  it('join (pending, same fingerprint both sides), approve, queue a health job, the agent runs it, the listings show it', async () => {
    expect((await cli('plugin', 'enable', 'server_management')).code).toBe(0);
    const joined = await pollUntil(async () => {
      const res = await agent('join', '--name', 'edge-1');
      return res.code === 0 ? res : undefined;
    }, 10_000);
    expect(joined?.json).toMatchObject({ status: 'pending', node_id: expect.any(Number) });
    expect(joined!.json.fingerprint).toBe(joined!.json.local_fingerprint);
    nodeId = joined!.json.node_id;

    const listed = await cli('node', 'list');
    expect(listed.code, listed.stderr).toBe(0);
    expect(listed.json.nodes).toEqual([expect.objectContaining({ node_id: nodeId, claimed_name: 'edge-1', status: 'pending', fingerprint: joined!.json.fingerprint })]);

    const early = await agent('once');
    expect(early.code).toBe(1);
    expect(early.stderr).toMatch(/claim: HTTP 403 AuthenticationError/);

    const approved = await cli('node', 'approve', String(nodeId));
    expect(approved.code, approved.stderr).toBe(0);
    expect(approved.json).toEqual({ node_id: nodeId, claimed_name: 'edge-1', fingerprint: joined!.json.fingerprint, status: 'approved' });

    const queued = await cli('node', 'job', '--node', String(nodeId), '--kind', 'health', '--payload', '{"detail":true}');
    expect(queued.code, queued.stderr).toBe(0);
    expect(queued.json.job).toEqual({ job_id: expect.any(Number), node_id: nodeId, kind: 'health', payload: { detail: true }, status: 'pending' });

    const ran = await agent('once');
    expect(ran.code, ran.stderr).toBe(0);
    expect(ran.json.result).toMatchObject({ job_id: queued.json.job.job_id, status: 'completed', output: { uptime_seconds: expect.any(Number) } });
    expect((await agent('once')).json).toEqual({ result: null });

    const after = await cli('node', 'list');
    expect(after.json.nodes[0]).toMatchObject({ status: 'approved', jobs: { pending: 0, claimed: 0, completed: 1, failed: 0, refused: 0 } });
    expect(after.json.nodes[0].last_contact_time).toMatch(/^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}$/);

    // The management listing, with a superadmin's machine key made by the CLI.
    const user = await cli('user', 'create', '--email', 'root@example.com', '--password', 'long enough pw', '--permission', '10');
    const key = await cli('key', 'create', '--user-id', String(user.json.user_id), '--permission', '4');
    const res = await fetch(`${server.url}/api/v1/management/nodes`, { headers: { public_key: key.json.public_key, secret_key: key.json.secret_key } });
    expect(res.status).toBe(200);
    const body = (await res.json()) as { data: { nodes: Array<Record<string, unknown>> } };
    expect(body.data.nodes).toEqual([expect.objectContaining({ node_id: nodeId, jobs: { pending: 0, claimed: 0, completed: 1, failed: 0, refused: 0 } })]);
  });

  it('refuses bad input with exit 2', async () => {
    const bad = await Promise.all([
      cli('node', 'approve', 'abc'),
      cli('node', 'approve', '987654'),
      cli('node', 'job', '--node', String(nodeId), '--kind', 'Not A Kind'),
      cli('node', 'job', '--node', String(nodeId), '--kind', 'health', '--payload', '[1]'),
      cli('node', 'job', '--kind', 'health'),
      cli('node', 'frobnicate'),
    ]);
    const patterns = [/ID must be an integer/, /no managed node 987654/, /job kind must match/, /--payload must be a JSON object/, /--node is required/, /usage: gatehouse node list/];
    bad.forEach((r, i) => {
      expect(r.code, r.stderr).toBe(2);
      expect(r.stdout).toBe('');
      expect(r.stderr).toMatch(patterns[i]!);
    });
  });

  it('revoke: the agent is refused (403), approving again is refused, and jobs cannot be queued for it', async () => {
    const revoked = await cli('node', 'revoke', String(nodeId));
    expect(revoked.code, revoked.stderr).toBe(0);
    expect(revoked.json.status).toBe('revoked');
    const refused = await agent('once');
    expect(refused.code).toBe(1);
    expect(refused.stderr).toMatch(/claim: HTTP 403/);
    const again = await cli('node', 'approve', String(nodeId));
    expect(again.code).toBe(2);
    expect(again.stderr).toMatch(/is revoked; it cannot be approved/);
    expect((await cli('node', 'job', '--node', String(nodeId), '--kind', 'health')).code).toBe(2);
  });
});
