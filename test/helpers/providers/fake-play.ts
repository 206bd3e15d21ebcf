import { generateKeyPairSync, verify } from 'node:crypto';
import { FakeServer } from './fake-server.js';

export const PLAY_ACCESS_TOKEN = 'ya29.play-test-token';
export const PLAY_SERVICE_ACCOUNT_EMAIL = 'play-api@example-project.iam.gserviceaccount.com';

/**
 * The Google endpoints the Android store reaches, on 127.0.0.1: the Play Developer API subset it reads
 * (purchases.subscriptionsv2.get, behind a bearer token), the OAuth token endpoint (the JWT-bearer grant
 * of a service account, checked against the account's public key) and the OIDC certificates that sign
 * Pub/Sub push tokens (key id to PEM, Google's v1 format).
 */
export class FakePlay extends FakeServer {
  /** purchaseToken to SubscriptionPurchaseV2. */
  readonly subscriptions = new Map<string, Record<string, unknown>>();
  /** Push-token signing certificates served at /oauth2/v1/certs. */
  certs: Record<string, string> = {};
  /** The service account the token endpoint knows (its JSON key, as a setting holds it). */
  readonly serviceAccount: Record<string, string>;
  private readonly publicKey: string;
  /** Access tokens the API accepts now; revokeTokens() empties it (as a revocation or an early expiry would). */
  readonly validTokens = new Set<string>([PLAY_ACCESS_TOKEN]);
  /** Every token the token endpoint issued. */
  readonly issued: string[] = [];
  /** When true, the token endpoint issues tokens that the API then refuses. */
  issueDeadTokens = false;
  private n = 0;

  constructor() {
    super();
    const { publicKey, privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
    this.publicKey = publicKey.export({ type: 'spki', format: 'pem' }).toString();
    this.serviceAccount = {
      type: 'service_account',
      client_email: PLAY_SERVICE_ACCOUNT_EMAIL,
      private_key_id: 'play-key-1',
      private_key: privateKey.export({ type: 'pkcs8', format: 'pem' }).toString(),
      token_uri: 'https://oauth2.googleapis.com/token',
    };
    this.route('GET /androidpublisher/v3/applications/:pkg/purchases/subscriptionsv2/tokens/:token', (req) => {
      const bearer = String(req.headers.authorization ?? '').replace(/^Bearer /, '');
      if (!this.validTokens.has(bearer)) return { status: 401, json: { error: { code: 401, message: 'Request had invalid authentication credentials.', status: 'UNAUTHENTICATED' } } };
      const sub = this.subscriptions.get(req.params.token!);
      return sub ? { json: sub } : { status: 404, json: { error: { code: 404, status: 'NOT_FOUND' } } };
    });
    this.route('GET /oauth2/v1/certs', () => ({ json: this.certs, headers: { 'cache-control': 'public, max-age=0' } }));
    this.route('POST /token', (req) => {
      const form = new URLSearchParams(req.rawBody);
      const assertion = form.get('assertion') ?? '';
      const [h, c, sig] = assertion.split('.');
      if (form.get('grant_type') !== 'urn:ietf:params:oauth:grant-type:jwt-bearer' || !h || !c || !sig) return { status: 400, json: { error: 'invalid_grant' } };
      const claims = JSON.parse(Buffer.from(c, 'base64url').toString('utf8')) as Record<string, unknown>;
      const signed = verify('RSA-SHA256', Buffer.from(`${h}.${c}`), this.publicKey, Buffer.from(sig, 'base64url'));
      if (!signed || claims.iss !== PLAY_SERVICE_ACCOUNT_EMAIL || claims.aud !== `${this.base}/token` || claims.scope !== 'https://www.googleapis.com/auth/androidpublisher') {
        return { status: 400, json: { error: 'invalid_grant', error_description: 'Invalid JWT Signature.' } };
      }
      const token = `ya29.fake-${++this.n}`;
      this.issued.push(token);
      if (!this.issueDeadTokens) this.validTokens.add(token);
      return { json: { access_token: token, expires_in: 3599, token_type: 'Bearer' } };
    });
  }

  revokeTokens(): void {
    this.validTokens.clear();
  }

  /** The settings that point the Android store at this fake (besides the package and push settings). */
  settings(): Record<string, string> {
    return {
      android_store_api_base: this.base,
      android_store_token_url: `${this.base}/token`,
      android_store_oidc_certs_url: `${this.base}/oauth2/v1/certs`,
      android_store_service_account: JSON.stringify(this.serviceAccount),
    };
  }
}
