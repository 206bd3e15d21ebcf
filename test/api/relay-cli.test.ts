import { createHash } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { gzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { onPostgres } from '../helpers/database.js';
import { freePort, pollUntil, programEnv, runGatehouse, scratchPostgres, startServerProcess, tempDataDir, type CliResult, type ServerProcess } from '../helpers/processes.js';

// `npx gatehouse relay run create --bundle FILE` against a running server (PGlite: through its socket;
// PostgreSQL: a scratch database both use), and the printed token used on the server's relay channel.
describe(`gatehouse relay run create (${onPostgres ? 'PostgreSQL' : 'PGlite through the server socket'})`, { timeout: 180_000 }, () => {
  let env: NodeJS.ProcessEnv;
  let server: ServerProcess;
  let cleanup: () => Promise<void>;
  let dir: string;
  const bundle = gzipSync(Buffer.from('a relay bundle '.repeat(1000)));
  const cli = (...args: string[]): Promise<CliResult> => runGatehouse(args, env);
  // The server trusts 127.0.0.1 as its TLS-terminating proxy (api_require_https stays on).
  const fetchBundle = (runId: unknown, sha256: string, token: string) =>
    fetch(`${server.url}/api/v1/relay/bundle?run=${runId}&sha256=${sha256}`, { headers: { 'x-forwarded-proto': 'https', 'x-service-relay-run-token': token } });

  beforeAll(async () => {
    const data = tempDataDir('gh-relay-cli-');
    dir = data.dir;
    writeFileSync(path.join(dir, 'bundle.tar.gz'), bundle);
    writeFileSync(path.join(dir, 'not-gzip.tar'), 'plain text');
    const db = onPostgres ? await scratchPostgres() : null;
    env = programEnv({ DATA_DIR: dir, PORT: String(await freePort()), TRUST_PROXY: '127.0.0.1', ...(db ? { DATABASE_URL: db.url } : {}) });
    server = await startServerProcess(env);
    cleanup = async () => {
      await server?.stop();
      await db?.drop();
      data.remove();
    };
  });
  afterAll(async () => cleanup?.());

  it('is refused (exit 2) while the plugin is inactive, without a bundle, and for a file that is not gzip', async () => {
    const inactive = await cli('relay', 'run', 'create', '--bundle', path.join(dir, 'bundle.tar.gz'));
    expect(inactive.code, inactive.stderr).toBe(2);
    expect(inactive.stdout).toBe('');
    expect(inactive.stderr).toMatch(/plugin mailbox is not active/);
    const enabled = await cli('plugin', 'enable', 'mailbox');
    expect(enabled.code, enabled.stderr).toBe(0);
    for (const [args, message] of [
      [['relay', 'run', 'create'], /--bundle is required/],
      [['relay', 'run', 'create', '--bundle', path.join(dir, 'missing.tar.gz')], /cannot read bundle/],
      [['relay', 'run', 'create', '--bundle', path.join(dir, 'not-gzip.tar')], /is not a gzip file/],
      [['relay', 'run'], /usage: gatehouse relay run create --bundle FILE/],
    ] as const) {
      const r = await cli(...args);
      expect(r.code, `${args.join(' ')}: ${r.stderr}`).toBe(2);
      expect(r.stderr).toMatch(message);
    }
  });

  it('prints the run id, the run token (once) and the bundle sha256; the token fetches the bundle from the server', async () => {
    const r = await cli('relay', 'run', 'create', '--bundle', path.join(dir, 'bundle.tar.gz'));
    expect(r.code, r.stderr).toBe(0);
    expect(Object.keys(r.json)).toEqual(['run_id', 'run_token', 'bundle_sha256', 'bundle_size_bytes', 'expires_time']);
    const sha256 = createHash('sha256').update(bundle).digest('hex');
    expect(r.json).toMatchObject({ run_id: expect.any(Number), run_token: expect.stringMatching(/^[0-9a-f]{64}$/), bundle_sha256: sha256, bundle_size_bytes: bundle.length });
    expect(r.json.expires_time).toMatch(/^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}$/);

    // The server sees the plugin switched on within a second or so.
    const res = await pollUntil(async () => {
      const answer = await fetchBundle(r.json.run_id, sha256, r.json.run_token);
      return answer.status === 404 ? undefined : answer;
    }, 15_000);
    expect(res?.status).toBe(200);
    expect(res?.headers.get('content-type')).toBe('application/gzip');
    expect(res?.headers.get('cache-control')).toBe('no-store');
    expect(Buffer.from(await res!.arrayBuffer()).equals(bundle)).toBe(true);

    const second = await cli('relay', 'run', 'create', '--bundle', path.join(dir, 'bundle.tar.gz'));
    expect(second.code, second.stderr).toBe(0);
    expect(second.json.run_id).not.toBe(r.json.run_id);
    expect(second.json.run_token).not.toBe(r.json.run_token);
    // One run's token is not another's.
    expect((await fetchBundle(second.json.run_id, sha256, r.json.run_token)).status).toBe(403);
    expect((await fetchBundle(second.json.run_id, sha256, second.json.run_token)).status).toBe(200);
  });
});
