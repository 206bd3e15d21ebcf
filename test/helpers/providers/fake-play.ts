import { FakeServer } from './fake-server.js';

export const PLAY_ACCESS_TOKEN = 'ya29.play-test-token';

/** The Play Developer API subset the store reads: purchases.subscriptionsv2.get, behind a bearer token. */
export class FakePlay extends FakeServer {
  /** purchaseToken to SubscriptionPurchaseV2. */
  readonly subscriptions = new Map<string, Record<string, unknown>>();

  constructor() {
    super();
    this.route('GET /androidpublisher/v3/applications/:pkg/purchases/subscriptionsv2/tokens/:token', (req) => {
      if (req.headers.authorization !== `Bearer ${PLAY_ACCESS_TOKEN}`) return { status: 401, json: { error: { code: 401, status: 'UNAUTHENTICATED' } } };
      const sub = this.subscriptions.get(req.params.token!);
      return sub ? { json: sub } : { status: 404, json: { error: { code: 404, status: 'NOT_FOUND' } } };
    });
  }
}
