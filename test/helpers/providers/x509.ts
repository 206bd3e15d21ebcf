import { generateKeyPairSync, type KeyObject } from 'node:crypto';
import rs from 'jsrsasign';

export interface TestCertificate {
  pem: string;
  /** DER bytes, base64 (x5c form). */
  base64Der: string;
  privateKey: KeyObject;
  publicKey: KeyObject;
  subject: string;
  /** A CA's OCSP responder: the URL the certificates it issues name in their Authority Information Access. */
  responderUrl?: string;
}

const stamp = (d: Date) => d.toISOString().replace(/[-:T]/g, '').slice(0, 14) + 'Z';

/**
 * A test X.509 certificate built with jsrsasign (already installed with the App Store library):
 * self-signed when no issuer is given. `extensions` adds marker extensions (OID with a NULL value).
 * `ocspUrl` (default: the issuer's responderUrl) goes in the Authority Information Access extension;
 * `responderUrl` is what this certificate, as a CA, hands to the ones it issues.
 */
export function makeCertificate(o: {
  cn: string;
  keyType: 'ec' | 'rsa';
  issuer?: TestCertificate;
  ca?: boolean;
  notBefore?: Date;
  notAfter?: Date;
  extensions?: string[];
  serial?: number;
  ocspUrl?: string;
  responderUrl?: string;
  /** Extended key usages by jsrsasign name (e.g. ocspSigning). */
  extKeyUsage?: string[];
}): TestCertificate {
  const ocspUrl = o.ocspUrl ?? o.issuer?.responderUrl;
  const keys = o.keyType === 'ec' ? generateKeyPairSync('ec', { namedCurve: 'P-256' }) : generateKeyPairSync('rsa', { modulusLength: 2048 });
  const signer = o.issuer ?? { privateKey: keys.privateKey, subject: `/CN=${o.cn}` };
  const signerType = o.issuer ? (o.issuer.privateKey.asymmetricKeyType === 'ec' ? 'ec' : 'rsa') : o.keyType;
  const cert = new rs.KJUR.asn1.x509.Certificate({
    version: 3,
    serial: { int: o.serial ?? Math.floor(Math.random() * 1e9) },
    issuer: { str: signer.subject },
    subject: { str: `/CN=${o.cn}` },
    notbefore: stamp(o.notBefore ?? new Date('2020-01-01T00:00:00Z')),
    notafter: stamp(o.notAfter ?? new Date('2040-01-01T00:00:00Z')),
    sbjpubkey: keys.publicKey.export({ type: 'spki', format: 'pem' }) as string,
    ext: [
      { extname: 'basicConstraints', critical: true, cA: Boolean(o.ca) },
      ...(o.extKeyUsage ? [{ extname: 'extKeyUsage', array: o.extKeyUsage.map((name) => ({ name })) }] : []),
      ...(ocspUrl ? [{ extname: 'authorityInfoAccess', array: [{ ocsp: ocspUrl }] }] : []),
      ...(o.extensions ?? []).map((oid) => ({ extname: oid, extn: '0500' })),
    ] as never,
    sigalg: signerType === 'ec' ? 'SHA256withECDSA' : 'SHA256withRSA',
    cakey: signer.privateKey.export({ type: 'pkcs8', format: 'pem' }) as string,
  });
  const pem = cert.getPEM();
  const base64Der = pem.replace(/-----[^-]+-----/g, '').replace(/\s+/g, '');
  return { pem, base64Der, privateKey: keys.privateKey, publicKey: keys.publicKey, subject: `/CN=${o.cn}`, ...(o.responderUrl ? { responderUrl: o.responderUrl } : {}) };
}
