import { sign } from 'node:crypto';
import { makeCertificate, type TestCertificate } from './x509.js';

/** Apple's marker extensions: the WWDR intermediate and the App Store receipt-signing leaf. */
export const APPLE_INTERMEDIATE_OID = '1.2.840.113635.100.6.2.1';
export const APPLE_LEAF_OID = '1.2.840.113635.100.6.11.1';

export interface AppleChain {
  root: TestCertificate;
  intermediate: TestCertificate;
  leaf: TestCertificate;
}

/**
 * A test root CA, an intermediate and a signing leaf shaped like Apple's (EC P-256, marker extensions).
 * With ocspUrl (a FakeOcspResponder's), the intermediate and the leaf name it in their Authority
 * Information Access, as Apple's do theirs, so the library's online checks ask it.
 */
export function makeAppleChain(o: { leafNotBefore?: Date; leafNotAfter?: Date; ocspUrl?: string } = {}): AppleChain {
  const responder = o.ocspUrl ? { responderUrl: o.ocspUrl } : {};
  const root = makeCertificate({ cn: 'Test Apple Root CA - G3', keyType: 'ec', ca: true, ...responder });
  const intermediate = makeCertificate({ cn: 'Test Apple WWDR CA G6', keyType: 'ec', ca: true, issuer: root, extensions: [APPLE_INTERMEDIATE_OID], ...responder });
  return { root, intermediate, leaf: makeAppleLeaf(intermediate, o) };
}

/**
 * A signing leaf under the given intermediate, optionally with its own validity window; it names the
 * intermediate's OCSP responder unless ocspUrl says another.
 */
export function makeAppleLeaf(intermediate: TestCertificate, o: { leafNotBefore?: Date; leafNotAfter?: Date; ocspUrl?: string } = {}): TestCertificate {
  return makeCertificate({
    cn: 'Test Prod ECC Mac App Store and iTunes Store Receipt Signing',
    keyType: 'ec',
    issuer: intermediate,
    extensions: [APPLE_LEAF_OID],
    ...(o.leafNotBefore ? { notBefore: o.leafNotBefore } : {}),
    ...(o.leafNotAfter ? { notAfter: o.leafNotAfter } : {}),
    ...(o.ocspUrl ? { ocspUrl: o.ocspUrl } : {}),
  });
}

const b64url = (b: Buffer | string) => Buffer.from(b).toString('base64url');

/** A JWS (ES256, x5c chain in the header) as the App Store signs notifications, transactions and renewal info. */
export function signAppleJws(payload: object, chain: AppleChain): string {
  const header = b64url(JSON.stringify({ alg: 'ES256', x5c: [chain.leaf.base64Der, chain.intermediate.base64Der, chain.root.base64Der] }));
  const body = b64url(JSON.stringify(payload));
  const signature = sign('sha256', Buffer.from(`${header}.${body}`), { key: chain.leaf.privateKey, dsaEncoding: 'ieee-p1363' });
  return `${header}.${body}.${b64url(signature)}`;
}
