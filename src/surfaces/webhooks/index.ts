import type { FastifyInstance } from 'fastify';
import { success } from '../../http/envelope.js';
import type { Services } from '../../services.js';
import { receiveWebhook } from '../../store/webhooks/receive.js';

/** Provider payloads are small; a larger body is refused before verification. */
const WEBHOOK_BODY_LIMIT = 256 * 1024;

/**
 * POST /webhooks/{source}: payment-provider callbacks, a special channel dispatched before key
 * authentication (its credential is the provider's payload signature) and metered by the general
 * per-IP bucket. The body is kept as raw bytes: signatures are over exactly what was sent.
 */
export async function webhooksSurface(api: FastifyInstance, services: Services): Promise<void> {
  await api.register(async (scope) => {
    scope.removeAllContentTypeParsers();
    scope.addContentTypeParser('*', { parseAs: 'buffer', bodyLimit: WEBHOOK_BODY_LIMIT }, (_req, body, done) => done(null, body));
    scope.post('/webhooks/:source', { config: { feature: 'webhooks', auth: 'none' }, bodyLimit: WEBHOOK_BODY_LIMIT }, async (request) => {
      const { source } = request.params as { source: string };
      request.logAction = `webhooks/${source}`;
      const rawBody = Buffer.isBuffer(request.body) ? request.body : Buffer.alloc(0);
      const result = await receiveWebhook(source, { rawBody, headers: request.headers }, services.store.context(), {
        active: services.store.active(),
        membership: services.tiers.membership,
        log: (err) => request.log.error({ err, source }, 'webhook processing failed'),
      });
      return success(result, result.duplicate ? 'Duplicate event; already processed.' : 'Event received.');
    });
  });
}
