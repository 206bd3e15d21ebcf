import type { FastifyInstance } from 'fastify';
import type { Services } from '../services.js';
import { actionsSurface } from './actions/index.js';
import { appSurface } from './app/navigation.js';
import { appLinksSurface } from './auth/app-links.js';
import { authSurface } from './auth/index.js';
import { crudSurface } from './crud/routes.js';
import { managementSurface } from './management/index.js';
import { formsSurface } from './forms/index.js';
import { webhooksSurface } from './webhooks/index.js';
import { driveUploadSurface } from './drive/uploads.js';
import { pluginModules } from '../boot/plugins.js';
import { withinPlugin } from '../plugin-kit/routes.js';

/** Every URL surface of the API, registered inside the front controller's scope. */
export async function registerSurfaces(api: FastifyInstance, services: Services): Promise<void> {
  await authSurface(api, services);
  await appLinksSurface(api, services);
  await appSurface(api, services);
  await managementSurface(api, services);
  await actionsSurface(api, services);
  await formsSurface(api, services);
  await webhooksSurface(api, services);
  await driveUploadSurface(api, services);
  for (const plugin of await pluginModules()) {
    const routes = plugin.apiRoutes;
    if (routes) await api.register(async (scope) => routes(withinPlugin(scope, plugin.name), services));
  }
  // Parametric /:className routes: every static surface route above wins over them.
  await crudSurface(api, services);
}
