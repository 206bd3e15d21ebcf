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
import type { PluginManagementHandler } from './management/registry.js';

/** What the roof hands the API's doors of the plugins it loaded. */
export interface SurfacePluginParts {
  management: readonly PluginManagementHandler[];
  /** Registers the plugins' own routes (special channels), each marked with its plugin. */
  registerRoutes(api: FastifyInstance): Promise<void>;
}

/** Every URL surface of the API, registered inside the front controller's scope. */
export async function registerSurfaces(api: FastifyInstance, services: Services, plugins: SurfacePluginParts): Promise<void> {
  await authSurface(api, services);
  await appLinksSurface(api, services);
  await appSurface(api, services);
  await managementSurface(api, services, plugins.management);
  await actionsSurface(api, services);
  await formsSurface(api, services);
  await webhooksSurface(api, services);
  await driveUploadSurface(api, services);
  await plugins.registerRoutes(api);
  // Parametric /:className routes: every static surface route above wins over them.
  await crudSurface(api, services);
}
