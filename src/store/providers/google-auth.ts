import { createSign } from 'node:crypto';
import type { Settings } from '../../settings/store.js';

/**
 * Google's two endpoints the Android store reaches besides the Play Developer API, both settings
 * (DESIGN 14, "Test authorities"), so a sandbox or a local fake stands in without code hooks:
 * android_store_oidc_certs_url serves the certificates that sign Pub/Sub push tokens (key id to PEM,
 * Google's v1 format), and android_store_token_url issues the service account's access tokens (the
 * OAuth 2.0 JWT-bearer grant, RFC 7523, as Google documents it for service accounts).
 */

export const GOOGLE_OIDC_CERTS_URL = 'https://www.googleapis.com/oauth2/v1/certs';
export const GOOGLE_TOKEN_URL = 'https://oauth2.googleapis.com/token';
const PLAY_SCOPE = 'https://www.googleapis.com/auth/androidpublisher';
/** How long fetched certificates are kept when the answer states no max-age. */
const CERTS_DEFAULT_SECONDS = 3600;
const TIMEOUT_MS = 20_000;

export class GoogleAuthError extends Error {
  constructor(
    message: string,
    readonly status: number | null = null,
  ) {
    super(message);
  }
}

const certCache = new Map<string, { certs: Record<string, string>; until: number }>();

/** The push-token signing certificates from `url`, cached for the answer's max-age. */
export async function oidcCertificates(url: string): Promise<Record<string, string>> {
  const cached = certCache.get(url);
  if (cached && cached.until > Date.now()) return cached.certs;
  const res = await fetch(url, { redirect: 'error', signal: AbortSignal.timeout(TIMEOUT_MS) });
  if (!res.ok) throw new GoogleAuthError(`OIDC certificates request failed (${res.status})`, res.status);
  const body = (await res.json()) as unknown;
  if (typeof body !== 'object' || body === null || Array.isArray(body)) throw new GoogleAuthError('OIDC certificates answer is not a key map');
  const certs = Object.fromEntries(Object.entries(body as Record<string, unknown>).filter((e): e is [string, string] => typeof e[1] === 'string'));
  const maxAge = Number(/max-age=(\d+)/.exec(res.headers.get('cache-control') ?? '')?.[1] ?? CERTS_DEFAULT_SECONDS);
  certCache.set(url, { certs, until: Date.now() + Math.min(maxAge, 24 * 3600) * 1000 });
  return certs;
}

interface ServiceAccount {
  client_email: string;
  private_key: string;
  private_key_id?: string;
}

function serviceAccount(settings: Settings): ServiceAccount {
  const raw = settings.string('android_store_service_account');
  if (!raw) throw new GoogleAuthError('android_store_service_account is not set');
  let sa: Partial<ServiceAccount>;
  try {
    sa = JSON.parse(raw) as Partial<ServiceAccount>;
  } catch {
    throw new GoogleAuthError('android_store_service_account is not JSON');
  }
  if (typeof sa.client_email !== 'string' || typeof sa.private_key !== 'string') throw new GoogleAuthError('android_store_service_account has no client_email or private_key');
  return sa as ServiceAccount;
}

const b64url = (v: string | Buffer) => Buffer.from(v).toString('base64url');

/**
 * Access tokens for the Play Developer API, one per service account and token endpoint, kept until a
 * minute before they expire, or until the API refuses one (refresh).
 */
export class PlayTokenSource {
  private cached: { key: string; token: string; until: number } | null = null;

  async token(settings: Settings, opts: { refresh?: boolean } = {}): Promise<string> {
    const url = settings.string('android_store_token_url') || GOOGLE_TOKEN_URL;
    const sa = serviceAccount(settings);
    const key = `${url}\n${sa.client_email}\n${sa.private_key_id ?? ''}`;
    if (!opts.refresh && this.cached?.key === key && this.cached.until > Date.now()) return this.cached.token;
    this.cached = null;
    // The assertion's times are the real time: Google checks them against its own clock.
    const iat = Math.floor(Date.now() / 1000);
    const header = b64url(JSON.stringify({ alg: 'RS256', typ: 'JWT', ...(sa.private_key_id ? { kid: sa.private_key_id } : {}) }));
    const claims = b64url(JSON.stringify({ iss: sa.client_email, scope: PLAY_SCOPE, aud: url, iat, exp: iat + 3600 }));
    const signature = createSign('RSA-SHA256').update(`${header}.${claims}`).sign(sa.private_key);
    const res = await fetch(url, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded', accept: 'application/json' },
      body: new URLSearchParams({ grant_type: 'urn:ietf:params:oauth:grant-type:jwt-bearer', assertion: `${header}.${claims}.${b64url(signature)}` }).toString(),
      redirect: 'error',
      signal: AbortSignal.timeout(TIMEOUT_MS),
    });
    if (!res.ok) throw new GoogleAuthError(`Play token request failed (${res.status})`, res.status);
    const body = (await res.json()) as { access_token?: unknown; expires_in?: unknown };
    if (typeof body.access_token !== 'string' || body.access_token === '') throw new GoogleAuthError('Play token answer has no access_token');
    const lifetime = typeof body.expires_in === 'number' ? body.expires_in : 3600;
    this.cached = { key, token: body.access_token, until: Date.now() + Math.max(0, lifetime - 60) * 1000 };
    return body.access_token;
  }
}
