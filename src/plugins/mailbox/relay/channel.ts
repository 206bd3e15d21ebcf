import type { FastifyInstance, FastifyRequest } from 'fastify';
import { success } from '../../../http/envelope.js';
import { actionError, authError, businessError, validationError } from '../../../http/errors.js';
import { RateLimitBucket, settingsLimits } from '../../../http/rate-limit/bucket.js';
import { formatTimestamp } from '../../../lib/time.js';
import type { Services } from '../../../services.js';
import { normaliseIp, parseBirthRequest, signatureVerifies, spkiFingerprint } from './birth.js';
import { relayProberFor } from './prober.js';
import { RELAY_BUNDLE_TYPE, bundleKey, liveRun, recordBirth } from './runs.js';

export const RUN_TOKEN_HEADER = 'x-service-relay-run-token';
const BORN_BODY_LIMIT = 16 * 1024;

/** The one answer for a missing, wrong, expired or spent token, and for an unknown run: nothing tells them apart. */
const refused = () => authError(403, 'Relay run token refused');

/**
 * The relay channel (DESIGN 11), inside the API's front controller and dispatched before key
 * authentication (auth 'none': the run token, and for the birth report the relay's signature, are the
 * credentials). Metered by the api_relay bucket instead of the general one; while the plugin is inactive
 * the paths are unknown (the front controller answers 404) and counted in the general bucket like any
 * unknown path.
 */
export async function relayChannel(api: FastifyInstance, services: Services): Promise<void> {
  const { db, clock, settings } = services;
  const bucket = new RateLimitBucket('relay', services.rateLimitStore, clock, settingsLimits(settings, 'api_relay_rate_limit_requests', 'api_relay_rate_limit_window'));
  const meter = (request: FastifyRequest) =>
    services.plugins.isActive('mailbox') ? bucket.consume(request.ip) : services.buckets.general.consume(request.ip);
  const config = { feature: 'relay' as const, auth: 'none' as const, meter };
  const blobs = () => services.driveStorage.blobs;

  api.get('/relay/bundle', { config }, async (request, reply) => {
    request.logAction = 'relay/bundle';
    const query = request.query as Record<string, unknown>;
    const run = await liveRun(db, query.run, request.headers[RUN_TOKEN_HEADER], clock.now());
    if (!run) throw refused();
    const wanted = typeof query.sha256 === 'string' ? query.sha256.toLowerCase() : '';
    if (!/^[0-9a-f]{64}$/.test(wanted)) throw validationError({ sha256: 'must be the bundle\'s SHA-256 (64 hex digits)' });
    if (wanted !== run.bundleSha256) throw actionError(409, 'The run\'s bundle has a different SHA-256', { reason: 'bundle_sha256_mismatch' });
    const key = await bundleKey(db, run.blobId);
    if (!key) throw new Error(`relay run ${run.runId}: its bundle blob has no bytes`);
    const body = await blobs().get(key);
    return reply
      .header('content-type', RELAY_BUNDLE_TYPE)
      .header('cache-control', 'no-store')
      .header('content-length', String(run.bundleSizeBytes))
      .header('content-disposition', `attachment; filename="relay-bundle-${run.runId}.tar.gz"`)
      .send(body);
  });

  api.post('/relay/born', { config, bodyLimit: BORN_BODY_LIMIT }, async (request) => {
    request.logAction = 'relay/born';
    const birth = parseBirthRequest(request.body);
    const now = clock.now();
    const run = await liveRun(db, birth.report.run_id, request.headers[RUN_TOKEN_HEADER], now);
    if (!run) throw refused();
    if (!signatureVerifies(birth)) throw authError(401, 'The birth report\'s signature does not verify with its identity key');
    const seenIp = normaliseIp(request.ip);
    if (normaliseIp(birth.report.public_ip) !== seenIp) {
      throw businessError('public_ip is not the address this report came from', { reason: 'public_ip_mismatch' });
    }
    if (spkiFingerprint(birth.spki) !== birth.report.identity_fingerprint) {
      throw businessError('identity_fingerprint is not the SHA-256 of identity_public_key', { reason: 'fingerprint_mismatch' });
    }
    const answered = await relayProberFor(services)({ ip: seenIp, port: settings.int('mailbox_relay_ping_port'), fingerprint: birth.report.identity_fingerprint });
    if (!answered) {
      throw businessError('The relay did not answer a ping pinned to its identity key; the report is not believed yet', { reason: 'ping_unanswered' });
    }
    const believed = await recordBirth(
      db,
      run.runId,
      { publicIp: seenIp, identityPublicKey: birth.report.identity_public_key, identityFingerprint: birth.report.identity_fingerprint, relayVersion: birth.report.relay_version },
      now,
    );
    if (!believed) throw refused();
    return success(
      { run_id: run.runId, believed: true, public_ip: seenIp, identity_fingerprint: birth.report.identity_fingerprint, relay_version: birth.report.relay_version, born_time: formatTimestamp(now) },
      'Birth report believed.',
    );
  });
}
