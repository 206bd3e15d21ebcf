import { sign } from 'node:crypto';
import { makeCertificate, type TestCertificate } from './x509.js';

/** A Google-style OIDC signing key (RSA, published as a certificate under a key id). */
export function makeOidcKey(kid = 'test-kid-1'): { kid: string; cert: TestCertificate; certs: Record<string, string> } {
  const cert = makeCertificate({ cn: 'test.googleapis.com', keyType: 'rsa' });
  return { kid, cert, certs: { [kid]: cert.pem } };
}

/**
 * A Pub/Sub push OIDC token (RS256) as Google signs it. Expiry is checked by google-auth-library
 * against the real time, so times default to around now.
 */
export function signOidcToken(key: { kid: string; cert: TestCertificate }, claims: { aud: string; iatSeconds?: number; lifetimeSeconds?: number; iss?: string; email?: string; emailVerified?: boolean }): string {
  const iat = claims.iatSeconds ?? Math.floor(Date.now() / 1000);
  const header = Buffer.from(JSON.stringify({ alg: 'RS256', kid: key.kid, typ: 'JWT' })).toString('base64url');
  const payload = Buffer.from(
    JSON.stringify({
      iss: claims.iss ?? 'https://accounts.google.com',
      aud: claims.aud,
      sub: '1234567890',
      email: claims.email ?? 'pubsub-push@example-project.iam.gserviceaccount.com',
      email_verified: claims.emailVerified ?? true,
      iat,
      exp: iat + (claims.lifetimeSeconds ?? 3600),
    }),
  ).toString('base64url');
  const signature = sign('RSA-SHA256', Buffer.from(`${header}.${payload}`), key.cert.privateKey).toString('base64url');
  return `${header}.${payload}.${signature}`;
}
