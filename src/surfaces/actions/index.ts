import multipart from '@fastify/multipart';
import type { FastifyInstance } from 'fastify';
import { actionRegistry } from '../../actions/index.js';
import { success } from '../../http/envelope.js';
import type { Services } from '../../services.js';
import { dispatchAction } from './dispatch.js';
import { isPublished, wrongMethod } from './shared.js';

const NOT_POST = ['GET', 'PUT', 'PATCH', 'DELETE'] as const;

/**
 * GET /actions, POST /action/{name}, POST /action/{plugin}/{action}. Routes use auth 'surface': the
 * handler decides requires_setting and sessionless dispatch before it authenticates.
 */
export async function actionsSurface(api: FastifyInstance, services: Services): Promise<void> {
  await api.register(async (scope) => {
    // Multipart bodies are read by the dispatcher, only for actions that accept files.
    await scope.register(multipart);

    scope.get('/actions', { config: { feature: 'actions', auth: 'none' } }, async (request) => {
      request.logAction = 'discovery';
      const data: Record<string, unknown> = {};
      for (const action of actionRegistry.available(services.plugins)) {
        if (!isPublished(services, action)) continue;
        const d = action.descriptor;
        data[action.name] = { description: d.description, requires_session: d.requires_session, input: d.input, has_form: action.form !== null };
      }
      return success(data);
    });

    // The dispatcher checks the body's text at its validation step (after the idempotency look), multipart
    // fields included; the front controller checks the path and query.
    const config = { feature: 'action', auth: 'surface', checksOwnBody: true } as const;
    scope.post<{ Params: { name: string } }>('/action/:name', { config }, (request, reply) => dispatchAction(services, request, reply, request.params.name));
    scope.post<{ Params: { plugin: string; action: string } }>('/action/:plugin/:action', { config }, (request, reply) =>
      dispatchAction(services, request, reply, `${request.params.plugin}/${request.params.action}`),
    );
    for (const url of ['/action/:name', '/action/:plugin/:action']) {
      scope.route({ method: [...NOT_POST], url, config, handler: wrongMethod('POST') });
    }
    scope.route({ method: ['POST', 'PUT', 'PATCH', 'DELETE'], url: '/actions', config: { feature: 'actions', auth: 'none' }, handler: wrongMethod('GET') });
  });
}
