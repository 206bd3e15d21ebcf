import { createHash } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import { createServer as createNetServer, type AddressInfo } from 'node:net';
import rs from 'jsrsasign';
import { makeCertificate, type TestCertificate } from './x509.js';

interface CertId {
  alg: string;
  issname: string;
  isskey: string;
  sbjsn: string;
}
/** jsrsasign's OCSP classes (its type definitions leave out OCSPResponse and OCSPParser). */
const ocspAsn1 = rs.KJUR.asn1.ocsp as unknown as {
  OCSPResponse: new (params: object) => { tohex(): string };
  OCSPParser: new () => { getOCSPRequest(hex: string): { array: CertId[] } };
};
const failure = (resstatus: 'malformedRequest' | 'unauthorized') => Buffer.from(new ocspAsn1.OCSPResponse({ resstatus }).tohex(), 'hex');

const generalizedTime = (ms: number) => new Date(ms).toISOString().replace(/[-:T]/g, '').slice(0, 14) + 'Z';

/** The subjectPublicKey bits of a certificate (hex), as OCSP hashes them for issuerKeyHash and the responder id. */
const publicKeyBits = (cert: TestCertificate) => new rs.X509(cert.pem).getSPKIValue();

/**
 * An OCSP responder (RFC 6960) on 127.0.0.1 for test certificate authorities: it answers a POSTed
 * application/ocsp-request with a BasicOCSPResponse for each requested certificate, signed by that
 * certificate's issuer through a delegated OCSP signing certificate the issuer issued (extended key
 * usage ocspSigning, responder id by key hash, the certificate in the response), as Apple's responders
 * answer for their CAs and as the App Store library requires: "good",
 * or "revoked" for a certificate passed to revoke(). A request for an issuer it does not serve is
 * answered "unauthorized".
 */
export class FakeOcspResponder {
  /** Every request received: the serial numbers (hex) it asked about. */
  readonly requests: string[][] = [];
  private server: Server | null = null;
  private readonly issuers: Array<{ ca: TestCertificate; signer: TestCertificate }> = [];
  private readonly revoked = new Set<string>();
  url = '';

  async start(): Promise<this> {
    this.server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        let body: Buffer;
        try {
          body = this.answer(Buffer.concat(chunks));
        } catch {
          body = failure('malformedRequest');
        }
        res.writeHead(200, { 'content-type': 'application/ocsp-response' });
        res.end(body);
      });
    });
    await new Promise<void>((resolve) => this.server!.listen(0, '127.0.0.1', resolve));
    this.url = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}/ocsp`;
    return this;
  }

  async stop(): Promise<void> {
    if (!this.server) return;
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server!.close(() => resolve()));
    this.server = null;
  }

  /** Answers for the certificates these CAs issue (their private keys sign the responses). */
  serve(...issuers: TestCertificate[]): this {
    for (const ca of issuers) {
      this.issuers.push({ ca, signer: makeCertificate({ cn: `${ca.subject.replace(/^\/CN=/, '')} OCSP Responder`, keyType: 'ec', issuer: ca, extKeyUsage: ['ocspSigning'] }) });
    }
    return this;
  }

  /** From now on the certificate is reported revoked by its issuer. */
  revoke(issuer: TestCertificate, cert: TestCertificate): void {
    this.revoked.add(`${publicKeyBits(issuer)}:${new rs.X509(cert.pem).getSerialNumberHex()}`);
  }

  private answer(der: Buffer): Buffer {
    const request = new ocspAsn1.OCSPParser().getOCSPRequest(der.toString('hex'));
    this.requests.push(request.array.map((r) => r.sbjsn));
    const first = request.array[0]!;
    const served = this.issuers.find(({ ca }) => rs.KJUR.crypto.Util.hashHex(publicKeyBits(ca), first.alg) === first.isskey);
    if (!served) return failure('unauthorized');
    const { ca: issuer, signer } = served;
    const now = Date.now();
    const array = request.array.map((certid) => ({
      certid,
      status: this.revoked.has(`${publicKeyBits(issuer)}:${certid.sbjsn}`) ? { status: 'revoked', time: generalizedTime(now - 3_600_000) } : { status: 'good' },
      thisupdate: generalizedTime(now - 60_000),
      nextupdate: generalizedTime(now + 3_600_000),
    }));
    const response = new ocspAsn1.OCSPResponse({
      resstatus: 'successful',
      restype: 'ocspBasic',
      respid: { key: createHash('sha1').update(Buffer.from(publicKeyBits(signer), 'hex')).digest('hex') },
      prodat: generalizedTime(now),
      array,
      sigalg: 'SHA256withECDSA',
      reskey: signer.privateKey.export({ type: 'pkcs8', format: 'pem' }) as string,
      certs: [signer.pem],
    });
    return Buffer.from(response.tohex(), 'hex');
  }
}

/** A URL on 127.0.0.1 where nothing listens (a responder that is down): the port was free a moment ago. */
export async function downUrl(): Promise<string> {
  const server = createNetServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return `http://127.0.0.1:${port}/ocsp`;
}
