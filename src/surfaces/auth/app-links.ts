import type { FastifyInstance, FastifyRequest } from 'fastify';
import { DEVICE_LINK_SECONDS, DeviceLinkInputError, POLL_AFTER_SECONDS, pollDeviceLink, startDeviceLink } from '../../accounts/device-links.js';
import { BRIDGE_TOKEN_SECONDS, BridgeTargetError, issueBridgeToken, validateBridgeTarget } from '../../accounts/web-session-bridge.js';
import { success } from '../../http/envelope.js';
import { actionError, authError, notFound, transactionError } from '../../http/errors.js';
import type { Services } from '../../services.js';

function body(request: FastifyRequest): Record<string, unknown> {
  return request.body !== null && typeof request.body === 'object' ? (request.body as Record<string, unknown>) : {};
}

/** POST /auth/web_session, POST /auth/device_link, GET /auth/device_link/{poll_token}. */
export async function appLinksSurface(api: FastifyInstance, services: Services): Promise<void> {
  const { db, clock, settings, config, buckets } = services;

  api.post('/auth/web_session', { config: { feature: 'auth' } }, async (request) => {
    request.logAction = 'web_session';
    const principal = await request.authenticate();
    if (principal.credential !== 'session' || !principal.apiKey || !principal.user) {
      throw authError(403, 'Only a session key can open a web session');
    }
    let target: string;
    try {
      target = validateBridgeTarget(body(request).target ?? (request.query as Record<string, unknown>).target);
    } catch (e) {
      if (e instanceof BridgeTargetError) throw transactionError(e.message, 400, { field: 'target' });
      throw e;
    }
    const token = await issueBridgeToken(db, clock, { userId: principal.user.usr_user_id, apiKeyId: principal.apiKey.apk_api_key_id, target });
    return success({ bridge_url: `/auth/bridge/${token}`, expires_in: BRIDGE_TOKEN_SECONDS }, 'Web session bridge issued.');
  });

  api.post('/auth/device_link', { config: { feature: 'auth', auth: 'none' } }, async (request) => {
    request.logAction = 'device_link_start';
    await buckets.deviceLink.consume(request.ip);
    const b = body(request);
    try {
      const link = await startDeviceLink(db, clock, { deviceName: b.device_name, platform: b.platform, devicePubkey: b.device_pubkey });
      return success(
        {
          link_code: link.linkCode,
          poll_token: link.pollToken,
          verify_url: `${config.baseUrl}/device?code=${encodeURIComponent(link.linkCode)}`,
          expires_time: link.expiresTime,
          poll_after: POLL_AFTER_SECONDS,
        },
        `Device link started; approve it within ${DEVICE_LINK_SECONDS / 60} minutes.`,
      );
    } catch (e) {
      if (e instanceof DeviceLinkInputError) throw transactionError(e.message, 400, { field: e.field });
      throw e;
    }
  });

  api.get('/auth/device_link/:pollToken', { config: { feature: 'auth', auth: 'none' } }, async (request) => {
    request.logAction = 'device_link_poll';
    await buckets.deviceLink.consume(request.ip);
    const { pollToken } = request.params as { pollToken: string };
    const outcome = await pollDeviceLink(db, clock, pollToken, settings.int('api_session_key_lifetime_days'));
    switch (outcome.kind) {
      case 'not_found':
        throw notFound('No device link with that token, or it has expired');
      case 'already_delivered':
        throw actionError(409, 'The credential for this device link was already delivered', { reason: 'already_delivered' });
      case 'pending':
        return success({ status: 'pending', poll_after: POLL_AFTER_SECONDS });
      case 'denied':
        return success({ status: 'denied' });
      case 'approved':
        // sealed_vault_key only when the approving user's client sealed their vault secret to device_pubkey
        // (a user with shared encrypted folders); it is opaque to the server.
        return success(
          {
            status: 'approved',
            public_key: outcome.key.publicKey,
            secret_key: outcome.key.secretKey,
            device_id: outcome.key.apiKeyId,
            expires_time: outcome.key.expiresTime,
            ...(outcome.sealedVaultKey !== null ? { sealed_vault_key: outcome.sealedVaultKey } : {}),
          },
          'Device linked.',
        );
    }
  });
}

