import { connect } from 'node:tls';
import { createHash } from 'node:crypto';
import { safeEqual } from '../../../lib/crypto.js';

export interface PingTarget {
  ip: string;
  port: number;
  /** base64 SHA-256 of the relay identity key's SPKI DER: the TLS peer must present that key. */
  fingerprint: string;
}

/** Answers true when the relay at the address answered and proved it holds the pinned key. */
export type RelayProber = (target: PingTarget) => Promise<boolean>;

export const PING_TIMEOUT_MS = 5000;

/**
 * The default ping: a TLS handshake with the relay whose certificate's public key has the pinned
 * fingerprint. The certificate is self-signed by the relay's identity key, so no chain is checked: the pin
 * is the trust, and the handshake (TLS 1.3 CertificateVerify) proves the relay holds the private key.
 */
export const tlsPinnedPing: RelayProber = (target) =>
  new Promise<boolean>((resolve) => {
    let settled = false;
    const done = (answer: boolean) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      socket.destroy();
      resolve(answer);
    };
    const socket = connect({ host: target.ip, port: target.port, rejectUnauthorized: false, minVersion: 'TLSv1.3' }, () => {
      const cert = socket.getPeerX509Certificate();
      if (!cert) return done(false);
      const spki = cert.publicKey.export({ type: 'spki', format: 'der' });
      done(safeEqual(createHash('sha256').update(spki).digest('base64'), target.fingerprint));
    });
    socket.on('error', () => done(false));
    const timer = setTimeout(() => done(false), PING_TIMEOUT_MS);
  });

/** The prober each app uses: the TLS ping unless a test put its own for those services. */
const probers = new WeakMap<object, RelayProber>();

export function useRelayProber(services: object, prober: RelayProber): void {
  probers.set(services, prober);
}

export function relayProberFor(services: object): RelayProber {
  return probers.get(services) ?? tlsPinnedPing;
}
