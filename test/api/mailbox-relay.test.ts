import { execFileSync } from 'node:child_process';
import { createHash, generateKeyPairSync, sign, type KeyObject } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:tls';
import os from 'node:os';
import path from 'node:path';
import { gzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { withFleetRelayTables } from '../../src/plugins/mailbox/fleet-relay-tables.js';
import { createRelayRun, type CreatedRun } from '../../src/plugins/mailbox/relay/runs.js';
import { tlsPinnedPing, useRelayProber, type PingTarget } from '../../src/plugins/mailbox/relay/prober.js';
import { createTestApp, type TestApp } from '../helpers/app.js';

const TOKEN = 'x-service-relay-run-token';

interface Identity {
  privateKey: KeyObject;
  spki: Buffer;
  publicKeyB64: string;
  fingerprint: string;
}

function identity(): Identity {
  const { privateKey, publicKey } = generateKeyPairSync('ed25519');
  const spki = publicKey.export({ type: 'spki', format: 'der' });
  return { privateKey, spki, publicKeyB64: spki.toString('base64'), fingerprint: createHash('sha256').update(spki).digest('base64') };
}

/** A birth report as a relay builds it: the five keys in order, signed with its identity key. */
function birthBody(runId: number, id: Identity, overrides: Record<string, unknown> = {}, signer: KeyObject = id.privateKey) {
  const report = { run_id: runId, public_ip: '127.0.0.1', identity_public_key: id.publicKeyB64, identity_fingerprint: id.fingerprint, relay_version: '1.4.2', ...overrides };
  const signature = sign(null, Buffer.from(`gatehouse-relay:born:v1\n${JSON.stringify(report)}`), signer).toString('base64');
  return { report, signature };
}

describe('the relay channel (GET /relay/bundle, POST /relay/born)', () => {
  let t: TestApp;
  let dataDir: string;
  let bundle: Buffer;
  let bundleFile: string;
  const pings: PingTarget[] = [];
  let pingAnswers = true;

  const newRun = (): Promise<CreatedRun> => createRelayRun(t.services.db, t.services.driveStorage.blobs, t.clock, { file: bundleFile, tokenHours: 24 });
  const fetchBundle = (run: { runId: number | string; bundleSha256: string }, token?: string, remoteAddress?: string) =>
    t.request({
      method: 'GET',
      url: `/api/v1/relay/bundle?run=${run.runId}&sha256=${run.bundleSha256}`,
      headers: token === undefined ? {} : { [TOKEN]: token },
      ...(remoteAddress ? { remoteAddress } : {}),
    });
  const born = (payload: unknown, token?: string) =>
    t.request({ method: 'POST', url: '/api/v1/relay/born', headers: token === undefined ? {} : { [TOKEN]: token }, payload: payload as Record<string, unknown> });
  const runRow = (runId: number) => withFleetRelayTables(t.services.db).selectFrom('rlr_relay_runs').selectAll().where('rlr_relay_run_id', '=', runId).executeTakeFirstOrThrow();

  beforeAll(async () => {
    dataDir = await mkdtemp(path.join(os.tmpdir(), 'gh-relay-'));
    t = await createTestApp({ config: { dataDir } });
    bundle = gzipSync(Buffer.from('relay bundle contents '.repeat(5000)));
    bundleFile = path.join(dataDir, 'bundle.tar.gz');
    await writeFile(bundleFile, bundle);
    useRelayProber(t.services, async (target) => {
      pings.push(target);
      return pingAnswers;
    });
  });
  afterAll(async () => {
    await t?.close();
    await rm(dataDir, { recursive: true, force: true });
  });

  it('while the plugin is inactive, both paths are the 404 of an unknown path', async () => {
    const run = await newRun();
    const unknown = await t.request({ method: 'GET', url: '/api/v1/relay/elsewhere' });
    const bundleRes = await fetchBundle(run, run.runToken);
    expect(bundleRes.statusCode).toBe(404);
    expect(bundleRes.json).toEqual({ ...unknown.json, error: 'No API endpoint GET /api/v1/relay/bundle' });
    const bornRes = await born(birthBody(run.runId, identity()), run.runToken);
    expect(bornRes.statusCode).toBe(404);
    expect(bornRes.json).toEqual({ ...unknown.json, error: 'No API endpoint POST /api/v1/relay/born' });
    expect(pings).toEqual([]);
  });

  describe('with the plugin active', () => {
    beforeAll(async () => {
      await t.services.plugins.setActive('mailbox', true);
    });

    it('streams the bundle to the run token with the right sha256 (application/gzip, no-store); only digests are stored', async () => {
      const run = await newRun();
      expect(run.bundleSha256).toBe(createHash('sha256').update(bundle).digest('hex'));
      const res = await fetchBundle(run, run.runToken);
      expect(res.statusCode).toBe(200);
      expect(res.headers['content-type']).toBe('application/gzip');
      expect(res.headers['cache-control']).toBe('no-store');
      expect(res.rawPayload.equals(bundle)).toBe(true);
      // Fetching again before the birth report is fine (a relay may retry a broken download).
      expect((await fetchBundle(run, run.runToken)).statusCode).toBe(200);
      const row = await runRow(run.runId);
      expect(row.rlr_token_hash).toBe(createHash('sha256').update(run.runToken).digest('hex'));
      expect(JSON.stringify(row)).not.toContain(run.runToken);
      expect(row.rlr_bundle_sha256).toBe(run.bundleSha256);
    });

    it('a wrong sha256 is 409; a malformed one 422', async () => {
      const run = await newRun();
      const wrong = await fetchBundle({ runId: run.runId, bundleSha256: 'ab'.repeat(32) }, run.runToken);
      expect(wrong.statusCode).toBe(409);
      expect(wrong.json.errortype).toBe('ActionError');
      expect(wrong.json.data).toEqual({ reason: 'bundle_sha256_mismatch' });
      const malformed = await fetchBundle({ runId: run.runId, bundleSha256: 'xyz' }, run.runToken);
      expect(malformed.statusCode).toBe(422);
      expect(malformed.json.errortype).toBe('ValidationError');
    });

    it('every bad token or run is one identical 403: missing, wrong, another run\'s, unknown run, malformed run, expired, spent', async () => {
      const run = await newRun();
      const other = await newRun();
      const expiring = await newRun();
      const spent = await newRun();
      const id = identity();
      expect((await born(birthBody(spent.runId, id), spent.runToken)).statusCode).toBe(200);
      // While run, other and expiring are live:
      const answers = [
        await fetchBundle(run),
        await fetchBundle(run, ''),
        await fetchBundle(run, 'f'.repeat(64)),
        await fetchBundle(run, other.runToken),
        await fetchBundle({ runId: 987654, bundleSha256: run.bundleSha256 }, run.runToken),
        await fetchBundle({ runId: 'abc', bundleSha256: run.bundleSha256 }, run.runToken),
        await fetchBundle({ runId: '', bundleSha256: run.bundleSha256 }, run.runToken),
        await fetchBundle(spent, spent.runToken),
        await born(birthBody(run.runId, id), 'wrong'),
        await born(birthBody(run.runId, id), other.runToken),
        await born(birthBody(spent.runId, id), spent.runToken),
        await born(birthBody(987654, id), run.runToken),
      ];
      expect((await fetchBundle(run, run.runToken)).statusCode).toBe(200);
      t.clock.advanceSeconds(24 * 3600);
      const afterExpiry = await newRun(); // a run made now is live
      answers.push(await fetchBundle(expiring, expiring.runToken), await born(birthBody(expiring.runId, id), expiring.runToken));
      for (const res of answers) {
        expect(res.statusCode).toBe(403);
        expect(res.body).toBe(answers[0]!.body);
      }
      expect(answers[0]!.json).toEqual({ api_version: '1.0', errortype: 'AuthenticationError', error: 'Relay run token refused', data: {} });
      expect((await fetchBundle(afterExpiry, afterExpiry.runToken)).statusCode).toBe(200);
    });

    it('a report with a bad signature is refused (401) and spends nothing', async () => {
      const run = await newRun();
      const id = identity();
      const forged = birthBody(run.runId, id, {}, identity().privateKey);
      const res = await born(forged, run.runToken);
      expect(res.statusCode).toBe(401);
      expect(res.json.errortype).toBe('AuthenticationError');
      // Changing a signed field after signing breaks the signature too.
      const tampered = birthBody(run.runId, id);
      tampered.report.relay_version = '9.9.9';
      expect((await born(tampered, run.runToken)).statusCode).toBe(401);
      expect((await runRow(run.runId)).rlr_born_time).toBeNull();
      expect((await fetchBundle(run, run.runToken)).statusCode).toBe(200);
    });

    it('checks the report\'s shape (422 ValidationError), its address and its fingerprint (422 ActionError)', async () => {
      const run = await newRun();
      const id = identity();
      const bad = await born({ report: { run_id: run.runId, public_ip: 'nowhere', identity_public_key: 'AAAA', identity_fingerprint: 'x', relay_version: '' }, signature: 'abc', extra: 1 }, run.runToken);
      expect(bad.statusCode).toBe(422);
      expect(bad.json.errortype).toBe('ValidationError');
      expect(Object.keys(bad.json.validation_errors).sort()).toEqual(
        ['extra', 'report.identity_fingerprint', 'report.identity_public_key', 'report.public_ip', 'report.relay_version', 'signature'].sort(),
      );
      const unsignedKey = await born({ ...birthBody(run.runId, id), report: { ...birthBody(run.runId, id).report, note: 'x' } }, run.runToken);
      expect(unsignedKey.statusCode).toBe(422);
      expect(unsignedKey.json.validation_errors).toHaveProperty(['report.note']);

      const elsewhere = await born(birthBody(run.runId, id, { public_ip: '203.0.113.9' }), run.runToken);
      expect(elsewhere.statusCode).toBe(422);
      expect(elsewhere.json).toMatchObject({ errortype: 'ActionError', data: { reason: 'public_ip_mismatch' } });

      const wrongPrint = await born(birthBody(run.runId, id, { identity_fingerprint: identity().fingerprint }), run.runToken);
      expect(wrongPrint.statusCode).toBe(422);
      expect(wrongPrint.json).toMatchObject({ errortype: 'ActionError', data: { reason: 'fingerprint_mismatch' } });
      expect((await runRow(run.runId)).rlr_born_time).toBeNull();
    });

    it('is not believed until the ping pinned to the fingerprint answers; then the token is spent (single use)', async () => {
      const run = await newRun();
      const id = identity();
      pings.length = 0;
      pingAnswers = false;
      const silent = await born(birthBody(run.runId, id), run.runToken);
      expect(silent.statusCode).toBe(422);
      expect(silent.json).toMatchObject({ errortype: 'ActionError', data: { reason: 'ping_unanswered' } });
      expect(pings).toEqual([{ ip: '127.0.0.1', port: 443, fingerprint: id.fingerprint }]);
      expect((await runRow(run.runId)).rlr_born_time).toBeNull();

      pingAnswers = true;
      const believed = await born(birthBody(run.runId, id), run.runToken);
      expect(believed.statusCode).toBe(200);
      expect(believed.json.data).toEqual({
        run_id: run.runId,
        believed: true,
        public_ip: '127.0.0.1',
        identity_fingerprint: id.fingerprint,
        relay_version: '1.4.2',
        born_time: expect.stringMatching(/^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}$/),
      });
      expect(await runRow(run.runId)).toMatchObject({ rlr_public_ip: '127.0.0.1', rlr_identity_public_key: id.publicKeyB64, rlr_identity_fingerprint: id.fingerprint, rlr_relay_version: '1.4.2' });
      expect((await born(birthBody(run.runId, id), run.runToken)).statusCode).toBe(403);
      expect((await fetchBundle(run, run.runToken)).statusCode).toBe(403);
    });

    it('of two reports racing with one token, exactly one is believed', async () => {
      const run = await newRun();
      const results = await Promise.all([born(birthBody(run.runId, identity()), run.runToken), born(birthBody(run.runId, identity()), run.runToken)]);
      expect(results.map((r) => r.statusCode).sort()).toEqual([200, 403]);
    });

    it('is metered by its own bucket api_relay (api_relay_rate_limit_requests per api_relay_rate_limit_window), not the general one', async () => {
      const run = await newRun();
      await t.services.settings.set('api_relay_rate_limit_requests', 3);
      await t.services.settings.set('api_rate_limit_requests', 2);
      try {
        const ip = '198.51.100.7';
        for (let i = 0; i < 3; i++) expect((await fetchBundle(run, 'wrong', ip)).statusCode).toBe(403);
        const limited = await fetchBundle(run, run.runToken, ip);
        expect(limited.statusCode).toBe(429);
        expect(limited.json.errortype).toBe('RateLimitError');
        expect(limited.json.data).toEqual({ limit: 3, window_seconds: 3600, count: 3, retry_after_seconds: 3600 });
        expect(limited.headers['retry-after']).toBe('3600');
        // The general bucket (2 per window) was not used by those four.
        expect((await t.request({ method: 'GET', url: '/api/v1/nowhere', remoteAddress: ip })).statusCode).toBe(404);
        t.clock.advanceSeconds(3600);
        expect((await fetchBundle(run, run.runToken, ip)).statusCode).toBe(200);
      } finally {
        await t.services.settings.set('api_relay_rate_limit_requests', 300);
        await t.services.settings.set('api_rate_limit_requests', 1000);
      }
    });

    describe('the default prober: a TLS ping pinned to the identity key', () => {
      let server: Server;
      let port: number;
      const relayId = identity();

      beforeAll(async () => {
        const keyPem = relayId.privateKey.export({ type: 'pkcs8', format: 'pem' }).toString();
        const keyFile = path.join(dataDir, 'relay-key.pem');
        await writeFile(keyFile, keyPem);
        // A self-signed certificate for the relay's identity key (node:crypto makes no certificates).
        const cert = execFileSync('openssl', ['req', '-new', '-x509', '-key', keyFile, '-subj', '/CN=relay', '-days', '1'], { encoding: 'utf8' });
        server = createServer({ key: keyPem, cert }, (socket) => socket.end());
        await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
        port = (server.address() as { port: number }).port;
      });
      afterAll(async () => {
        await new Promise<void>((resolve) => server?.close(() => resolve()));
      });

      it('answers only for the pinned key', async () => {
        expect(await tlsPinnedPing({ ip: '127.0.0.1', port, fingerprint: relayId.fingerprint })).toBe(true);
        expect(await tlsPinnedPing({ ip: '127.0.0.1', port, fingerprint: identity().fingerprint })).toBe(false);
        const closed = createServer({});
        await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
        const closedPort = (closed.address() as { port: number }).port;
        await new Promise<void>((resolve) => closed.close(() => resolve()));
        expect(await tlsPinnedPing({ ip: '127.0.0.1', port: closedPort, fingerprint: relayId.fingerprint })).toBe(false);
      });

      it('a birth report is believed through the real ping to the relay\'s address and port', async () => {
        useRelayProber(t.services, tlsPinnedPing);
        await t.services.settings.set('mailbox_relay_ping_port', port);
        try {
          const run = await newRun();
          const impostor = identity();
          expect((await born(birthBody(run.runId, impostor), run.runToken)).json.data).toEqual({ reason: 'ping_unanswered' });
          const res = await born(birthBody(run.runId, relayId), run.runToken);
          expect(res.statusCode).toBe(200);
          expect(res.json.data.believed).toBe(true);
        } finally {
          await t.services.settings.set('mailbox_relay_ping_port', 443);
        }
      });
    });
  });
});
