import type { FastifyInstance } from 'fastify';

/**
 * Marks every route a plugin registers in this scope with the plugin's name; the front controller and the
 * page routes answer such a route as unknown while the plugin is inactive.
 */
export function withinPlugin(scope: FastifyInstance, name: string): FastifyInstance {
  scope.addHook('onRoute', (route) => {
    route.config = { ...(route.config ?? {}), plugin: name };
  });
  return scope;
}
