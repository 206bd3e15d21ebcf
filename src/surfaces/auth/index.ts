import type { FastifyInstance, FastifyRequest } from 'fastify';
import { createSessionKey, revokeKey } from '../../accounts/api-keys.js';
import { verifyLogin } from '../../accounts/login.js';
import { sessionUserSummary } from '../../accounts/session-summary.js';
import { success } from '../../http/envelope.js';
import { authError } from '../../http/errors.js';
import type { Services } from '../../services.js';

const MAX_DEVICE_LABEL = 100;

function bodyField(request: FastifyRequest, name: string): unknown {
  const body = request.body;
  if (body === null || typeof body !== 'object') return undefined;
  return (body as Record<string, unknown>)[name];
}

/** POST /auth/login, GET /auth/session, POST /auth/logout. */
export async function authSurface(api: FastifyInstance, services: Services): Promise<void> {
  const { db, clock, settings, buckets } = services;

  api.post('/auth/login', { config: { feature: 'auth', auth: 'none' } }, async (request) => {
    request.logAction = 'login';
    await buckets.failedAuth.check(request.ip);
    const email = bodyField(request, 'email');
    const password = bodyField(request, 'password');
    const label = bodyField(request, 'device_label');
    if (typeof email !== 'string' || email.trim() === '' || typeof password !== 'string' || password === '') {
      throw authError(400, 'Missing login fields: email and password are required');
    }
    if (label !== undefined && label !== null && (typeof label !== 'string' || label.length > MAX_DEVICE_LABEL)) {
      throw authError(400, `device_label must be a string of at most ${MAX_DEVICE_LABEL} characters`);
    }
    const user = await verifyLogin(db, email, password);
    if (!user) {
      await buckets.failedAuth.record(request.ip);
      throw authError(401, 'Invalid email or password');
    }
    const now = clock.now();
    const lifetimeDays = settings.int('api_session_key_lifetime_days');
    const key = await createSessionKey(db, {
      userId: user.usr_user_id,
      name: typeof label === 'string' && label.trim() !== '' ? label.trim() : null,
      now,
      expiresTime: new Date(now.getTime() + lifetimeDays * 86_400_000),
    });
    await db.updateTable('usr_users').set({ usr_lastlogin_time: now }).where("usr_user_id", "=", user.usr_user_id).execute();
    return success(
      {
        public_key: key.publicKey,
        secret_key: key.secretKey,
        expires_time: key.expiresTime,
        user: await sessionUserSummary(db, services.tiers, user),
      },
      'Login successful.',
    );
  });

  api.get('/auth/session', { config: { feature: 'auth' } }, async (request) => {
    request.logAction = 'session';
    const principal = await request.authenticate();
    if (!principal.user) throw authError(401, 'Sign in required');
    return success(await sessionUserSummary(db, services.tiers, principal.user, principal.userTier), 'Session found.');
  });

  api.post('/auth/logout', { config: { feature: 'auth' } }, async (request) => {
    request.logAction = 'logout';
    const principal = await request.authenticate();
    if (principal.credential !== 'session' || !principal.apiKey) {
      throw authError(403, 'Only a session key can log out; machine keys are revoked by an administrator');
    }
    await revokeKey(db, principal.apiKey.apk_api_key_id, clock.now());
    return success({ revoked: true, public_key: principal.apiKey.apk_public_key }, 'Logout successful.');
  });
}
