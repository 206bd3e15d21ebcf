import type { FastifyRequest } from 'fastify';
import { randomHex } from '../../lib/crypto.js';
import { SESSION_COOKIE } from '../../http/transport.js';
import type { VaultWindow, VaultWindows } from './window.js';

/**
 * The vault window of the request's browser session, keyed by the cookie's token. A request without one
 * gets a window under a random token: it can never open anything.
 */
export function vaultWindowOf(services: { vaultWindows: VaultWindows }, request: FastifyRequest): VaultWindow {
  const token = request.cookies[SESSION_COOKIE];
  return services.vaultWindows.forSession(token && /^[0-9a-f]{64}$/.test(token) ? token : randomHex(32), request.ip);
}
