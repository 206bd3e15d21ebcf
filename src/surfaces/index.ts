import type { FastifyInstance } from 'fastify';
import type { Services } from '../services.js';
import { authSurface } from './auth/index.js';
import { managementSurface } from './management/index.js';

/** Every URL surface of the API, registered inside the front controller's scope. */
export async function registerSurfaces(api: FastifyInstance, services: Services): Promise<void> {
  await authSurface(api, services);
  await managementSurface(api, services);
}
