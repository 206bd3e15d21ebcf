import type { FastifyRequest } from 'fastify';
import { randomHex } from '../../lib/crypto.js';
import type { Services } from '../../services.js';
import { SESSION_COOKIE } from '../web-sessions.js';
import type { VaultWindow } from './window.js';

/**
 * The vault window of the request's browser session, keyed by the cookie's token. A request without one
 * gets a window under a random token: it can never open anything.
 */
export function vaultWindowOf(services: Services, request: FastifyRequest): VaultWindow {
  const token = request.cookies[SESSION_COOKIE];
  return services.vaultWindows.forSession(token && /^[0-9a-f]{64}$/.test(token) ? token : randomHex(32), request.ip);
}
