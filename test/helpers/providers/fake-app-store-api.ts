import { generateKeyPairSync, verify, type KeyObject } from 'node:crypto';
import { signAppleJws, type AppleChain } from './apple-signer.js';
import { FakeServer } from './fake-server.js';

/** One auto-renewable subscription as the App Store holds it. */
export interface AppStoreSubscriptionState {
  /** Apple's status: 1 active, 2 expired, 3 billing retry, 4 grace period, 5 revoked. */
  status: number;
  /** JWSTransactionDecodedPayload fields (originalTransactionId, expiresDate, revocationDate, ...). */
  transaction: Record<string, unknown>;
  /** JWSRenewalInfoDecodedPayload fields (autoRenewStatus, gracePeriodExpiresDate, ...). */
  renewal: Record<string, unknown>;
}

/** An in-app purchase key as App Store Connect issues it: the private key (PKCS#8 PEM, the .p8 file) and its ids. */
export function makeInAppKey(): { keyId: string; issuerId: string; privateKeyPem: string; publicKey: KeyObject } {
  const { privateKey, publicKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
  return { keyId: 'TESTKEY123', issuerId: '57246542-96fe-1a63-e053-0824d011072a', privateKeyPem: privateKey.export({ type: 'pkcs8', format: 'pem' }).toString(), publicKey };
}

/**
 * The App Store Server API's Get All Subscription Statuses (GET /inApps/v1/subscriptions/{transactionId})
 * as Apple documents it: the caller authenticates with an ES256 JWT signed by the in-app key (kid, iss,
 * aud appstoreconnect-v1, bid, exp), else 401; an unknown transaction id is 404 with errorCode 4040010;
 * the answer is a StatusResponse whose lastTransactions carry the signed transaction and renewal info
 * (JWS with the x5c chain, as notifications do).
 */
export class FakeAppStoreApi extends FakeServer {
  readonly subscriptions = new Map<string, AppStoreSubscriptionState>();

  constructor(
    /** The chain the answers' transactions and renewal info are signed with. */
    public chain: AppleChain,
    private readonly key: { keyId: string; issuerId: string; publicKey: KeyObject },
    private readonly bundleId: string,
  ) {
    super();
    this.route('GET /inApps/v1/subscriptions/:id', (req) => {
      if (!this.authorized(req.headers.authorization)) return { status: 401, text: '' };
      const id = req.params.id!;
      const sub = [...this.subscriptions.values()].find((s) => s.transaction.originalTransactionId === id || s.transaction.transactionId === id);
      if (!sub) return { status: 404, json: { errorCode: 4040010, errorMessage: 'Transaction id not found.' } };
      const signedDate = Date.now();
      return {
        json: {
          environment: 'Sandbox',
          bundleId: this.bundleId,
          data: [
            {
              subscriptionGroupIdentifier: '21345678',
              lastTransactions: [
                {
                  status: sub.status,
                  originalTransactionId: sub.transaction.originalTransactionId,
                  signedTransactionInfo: signAppleJws({ bundleId: this.bundleId, environment: 'Sandbox', signedDate, ...sub.transaction }, this.chain),
                  signedRenewalInfo: signAppleJws({ environment: 'Sandbox', signedDate, originalTransactionId: sub.transaction.originalTransactionId, ...sub.renewal }, this.chain),
                },
              ],
            },
          ],
        },
      };
    });
  }

  set(originalTransactionId: string, state: AppStoreSubscriptionState): void {
    this.subscriptions.set(originalTransactionId, { ...state, transaction: { originalTransactionId, transactionId: `${originalTransactionId}-latest`, ...state.transaction } });
  }

  private authorized(header: string | string[] | undefined): boolean {
    const token = typeof header === 'string' && header.startsWith('Bearer ') ? header.slice(7) : '';
    const [h, p, s] = token.split('.');
    if (!h || !p || !s) return false;
    try {
      const head = JSON.parse(Buffer.from(h, 'base64url').toString('utf8')) as Record<string, unknown>;
      const claims = JSON.parse(Buffer.from(p, 'base64url').toString('utf8')) as Record<string, unknown>;
      if (head.alg !== 'ES256' || head.kid !== this.key.keyId) return false;
      if (claims.iss !== this.key.issuerId || claims.aud !== 'appstoreconnect-v1' || claims.bid !== this.bundleId) return false;
      if (typeof claims.exp !== 'number' || claims.exp * 1000 < Date.now()) return false;
      return verify('sha256', Buffer.from(`${h}.${p}`), { key: this.key.publicKey, dsaEncoding: 'ieee-p1363' }, Buffer.from(s, 'base64url'));
    } catch {
      return false;
    }
  }
}
