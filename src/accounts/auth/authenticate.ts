import type { FastifyRequest } from 'fastify';
import type { Kysely } from 'kysely';
import { verifySecret } from '../passwords.js';
import type { DB } from '../../db/types.js';
import type { Clock } from '../../lib/clock.js';
import { safeEqual, sha256Hex } from '../../lib/crypto.js';
import type { ReadCache } from '../../cache/read-cache.js';
import { ApiError, authError } from '../../http/errors.js';
import type { RateLimitBucket } from '../../http/rate-limit/bucket.js';
import type { Principal } from './principal.js';
import { VerificationCache } from './verification-cache.js';
import { CSRF_HEADER } from '../../http/transport.js';
import { userTierFromRow, type TierFeatureReader } from '../../tiers/features.js';
import type { WebSessions } from '../web-sessions.js';
import { preparedQuery } from '../../db/prepared.js';

const LAST_USED_REFRESH_MS = 3600_000;

/**
 * A key with its user, for every key-authenticated request. The user's tier comes along (at most one tier
 * membership per user), saving the request a query.
 */
const keyLookup = preparedQuery((db, p: { publicKey: string }) =>
  db
    .selectFrom('apk_api_keys')
    .innerJoin('usr_users', 'usr_user_id', 'apk_usr_user_id')
    .leftJoin('grm_group_members', (join) => join.onRef('grm_foreign_key_id', '=', 'usr_user_id').on('grm_sbt_subscription_tier_id', 'is not', null))
    .leftJoin('sbt_subscription_tiers', (join) =>
      join.onRef('sbt_subscription_tier_id', '=', 'grm_sbt_subscription_tier_id').on('sbt_delete_time', 'is', null).on('sbt_is_active', '=', true),
    )
    .select([
      'apk_api_key_id', 'apk_type', 'apk_permission', 'apk_public_key', 'apk_secret_hash', 'apk_is_active',
      'apk_start_time', 'apk_expires_time', 'apk_last_used_time', 'apk_ip_restriction', 'apk_delete_time',
      'usr_user_id', 'usr_email', 'usr_first_name', 'usr_last_name', 'usr_nickname', 'usr_permission',
      'usr_delete_time', 'usr_is_disabled',
      'sbt_subscription_tier_id', 'sbt_name', 'sbt_display_name', 'sbt_tier_level', 'sbt_features',
    ])
    .where('apk_public_key', '=', p.publicKey),
);
/** A key with its user and tier, as the lookup reads it. */
export type KeyRow = Awaited<ReturnType<typeof keyLookup>>[number];

/** What the authentication stage reads (the doors' Services satisfies it). */
export interface AuthenticationDeps {
  db: Kysely<DB>;
  clock: Clock;
  buckets: { failedAuth: RateLimitBucket };
  keyRows: Pick<ReadCache<string, KeyRow>, 'get'>;
  webSessions: Pick<WebSessions, 'end'>;
  tiers: { readerFor(scope: object): Pick<TierFeatureReader, 'prime'> };
  /** Machine-key secrets verified recently (the slow hash is paid once per key and secret). */
  keyVerifications: VerificationCache;
}

const inFlight = new WeakMap<FastifyRequest, Promise<Principal>>();

function header(request: FastifyRequest, name: string): string | undefined {
  const v = request.headers[name];
  if (Array.isArray(v)) return v[0];
  return v;
}

/** Whether the caller's address is on a key's comma-separated allow-list (exact match, IPv4-mapped folded). */
function ipAllowed(restriction: string | null, ip: string): boolean {
  if (restriction === null || restriction.trim() === '') return true;
  const caller = ip.startsWith('::ffff:') ? ip.slice(7) : ip;
  return restriction.split(',').some((allowed) => {
    const a = allowed.trim();
    return a === caller || a === ip;
  });
}

/** Key headers → principal, or the contract's 4xx. Every failure counts toward the failed-auth bucket. */
async function authenticateKey(deps: AuthenticationDeps, request: FastifyRequest, publicKey: string | undefined, secretKey: string | undefined): Promise<Principal> {
  const { db, clock, buckets, keyRows, keyVerifications: verificationCache } = deps;
  const ip = request.ip;
  if (request.failedAuthReading) request.failedAuthReading();
  else await buckets.failedAuth.check(ip);
  const fail = async (e: ApiError): Promise<never> => {
    await buckets.failedAuth.record(ip);
    throw e;
  };
  if (!publicKey || !secretKey) return fail(authError(400, 'Missing API key headers public_key and secret_key'));

  const nowMs = clock.nowMs();
  const row = await keyRows.get(publicKey, nowMs, async () => (await keyLookup(db, { publicKey }))[0]);
  if (!row) return fail(authError(400, 'Invalid API key'));

  // The secret is checked before anything about the key's state is revealed.
  let secretOk: boolean;
  if (row.apk_type === 'session') {
    secretOk = safeEqual(sha256Hex(secretKey), row.apk_secret_hash);
  } else if (verificationCache.has(row.apk_api_key_id, secretKey, row.apk_secret_hash, nowMs)) {
    secretOk = true;
  } else {
    secretOk = await verifySecret(row.apk_secret_hash, secretKey);
    if (secretOk) verificationCache.remember(row.apk_api_key_id, secretKey, row.apk_secret_hash, nowMs);
  }
  if (!secretOk) return fail(authError(401, 'Invalid API credentials'));

  if (row.usr_delete_time !== null) return fail(authError(400, 'The key belongs to a deleted user'));
  if (row.apk_delete_time !== null) return fail(authError(401, 'API key has been revoked'));
  if (!row.apk_is_active) return fail(authError(401, 'API key is inactive'));
  if (row.usr_is_disabled) return fail(authError(401, 'The key belongs to a disabled user'));
  if (row.apk_start_time !== null && nowMs < row.apk_start_time.getTime()) return fail(authError(401, 'API key is not valid yet'));
  if (row.apk_expires_time !== null && nowMs >= row.apk_expires_time.getTime()) return fail(authError(401, 'API key has expired'));
  if (row.apk_type === 'machine' && !ipAllowed(row.apk_ip_restriction, ip)) return fail(authError(401, 'IP address not allowed for this key'));

  if (row.apk_last_used_time === null || nowMs - row.apk_last_used_time.getTime() >= LAST_USED_REFRESH_MS) {
    // Conditional, so concurrent requests of one key write at most once per hour.
    await db
      .updateTable('apk_api_keys')
      .set({ apk_last_used_time: clock.now() })
      .where('apk_api_key_id', '=', row.apk_api_key_id)
      .where((eb) => eb.or([eb('apk_last_used_time', 'is', null), eb('apk_last_used_time', '<=', new Date(nowMs - LAST_USED_REFRESH_MS))]))
      .execute();
  }

  return {
    credential: row.apk_type,
    apiKey: {
      apk_api_key_id: row.apk_api_key_id,
      apk_type: row.apk_type,
      apk_permission: row.apk_permission,
      apk_public_key: row.apk_public_key,
    },
    user: {
      usr_user_id: row.usr_user_id,
      usr_email: row.usr_email,
      usr_first_name: row.usr_first_name,
      usr_last_name: row.usr_last_name,
      usr_nickname: row.usr_nickname,
      usr_permission: row.usr_permission,
    },
    capability: row.apk_type === 'session' ? 4 : row.apk_permission,
    userTier: userTierFromRow(row),
  };
}

/**
 * The browser-session credential: the website session cookie plus X-Service-Csrf equal to the session's
 * token. A session with no signed-in user is the anonymous (guest) principal.
 */
async function authenticateBrowser(deps: AuthenticationDeps, request: FastifyRequest): Promise<Principal> {
  const { db, buckets } = deps;
  await buckets.failedAuth.check(request.ip);
  const session = await request.webSession();
  if (!session) {
    await buckets.failedAuth.record(request.ip);
    throw authError(401, 'Your session has ended; sign in again');
  }
  const presented = header(request, CSRF_HEADER);
  if (presented === undefined) throw authError(403, 'Missing or wrong CSRF token');
  if (!safeEqual(presented, session.csrfToken)) {
    // A wrong token is a guess at the session's secret, counted like a wrong key secret. A missing one is
    // not (a page opened straight in the address bar sends none) and must not lock out the address.
    await buckets.failedAuth.record(request.ip);
    throw authError(403, 'Missing or wrong CSRF token');
  }
  if (session.userId === null) {
    return { credential: 'guest', apiKey: null, user: null, capability: 0, webSessionId: session.id, loginAsBy: null };
  }
  const user = await db
    .selectFrom('usr_users')
    .select(['usr_user_id', 'usr_email', 'usr_first_name', 'usr_last_name', 'usr_nickname', 'usr_permission', 'usr_delete_time', 'usr_is_disabled'])
    .where('usr_user_id', '=', session.userId)
    .executeTakeFirst();
  if (!user || user.usr_delete_time !== null || user.usr_is_disabled) {
    await deps.webSessions.end(session.id);
    throw authError(401, 'Your session has ended; sign in again');
  }
  return {
    credential: 'browser',
    apiKey: null,
    user: {
      usr_user_id: user.usr_user_id,
      usr_email: user.usr_email,
      usr_first_name: user.usr_first_name,
      usr_last_name: user.usr_last_name,
      usr_nickname: user.usr_nickname,
      usr_permission: user.usr_permission,
    },
    capability: 4,
    webSessionId: session.id,
    loginAsBy: session.loginAsBy,
  };
}

async function resolvePrincipal(deps: AuthenticationDeps, request: FastifyRequest): Promise<Principal> {
  const publicKey = header(request, 'public_key');
  const secretKey = header(request, 'secret_key');
  // Key headers, when present, always take precedence over any cookie.
  if (publicKey !== undefined || secretKey !== undefined) return authenticateKey(deps, request, publicKey, secretKey);
  if (request.hasWebSessionCookie()) return authenticateBrowser(deps, request);
  throw authError(400, 'Missing API key headers public_key and secret_key');
}

/** The authentication stage: runs once per request, however many times it is asked. */
export function authenticateRequest(deps: AuthenticationDeps, request: FastifyRequest): Promise<Principal> {
  let pending = inFlight.get(request);
  if (!pending) {
    pending = resolvePrincipal(deps, request).then((p) => {
      request.principal = p;
      if (p.user && p.userTier !== undefined) deps.tiers.readerFor(request).prime(p.user.usr_user_id, p.userTier);
      return p;
    });
    inFlight.set(request, pending);
  }
  return pending;
}

