import { FakeServer } from './fake-server.js';

export interface FakePaypalSubscription {
  id: string;
  status: string;
  plan_id: string;
  custom_id: string | null;
  billing_info: { next_billing_time: string | null };
}

/**
 * The wallet-provider (PayPal) API subset the store calls: OAuth client-credentials token,
 * subscriptions (get, cancel, suspend, activate, revise) and capture refunds. It also hosts the
 * webhook signing certificate at /v1/notifications/certs/{name} (the certificate host).
 */
export class FakePaypal extends FakeServer {
  readonly subscriptions = new Map<string, FakePaypalSubscription>();
  readonly certificates = new Map<string, string>();
  /** A subscription's payments, as its transactions list reports them. */
  readonly transactions = new Map<string, Array<{ id: string; status: string; time: string; amount_with_breakdown: { gross_amount: { currency_code: string; value: string } } }>>();
  readonly clientId = 'wallet-client-id';
  readonly clientSecret = 'wallet-client-secret';
  private readonly tokens = new Set<string>();
  /** Sales (subscription payments) as GET /v1/payments/sale/{id} shows them. */
  readonly sales = new Map<string, { id: string; state: string; billing_agreement_id: string; amount: { total: string; currency: string } }>();
  /** Every token issued; when issueDeadTokens is set, new tokens are issued but never accepted. */
  readonly issued: string[] = [];
  issueDeadTokens = false;
  private n = 0;

  constructor() {
    super();
    this.route('POST /v1/oauth2/token', (req) => {
      const expected = `Basic ${Buffer.from(`${this.clientId}:${this.clientSecret}`).toString('base64')}`;
      if (req.headers.authorization !== expected || !String(req.rawBody).includes('grant_type=client_credentials')) {
        return { status: 401, json: { error: 'invalid_client' } };
      }
      const token = `A21AA-test-${++this.n}`;
      this.issued.push(token);
      if (!this.issueDeadTokens) this.tokens.add(token);
      return { json: { access_token: token, token_type: 'Bearer', expires_in: 32400 } };
    });
    this.route('GET /v1/notifications/certs/:name', (req) => {
      const pem = this.certificates.get(req.params.name!);
      return pem ? { text: pem } : { status: 404, text: 'not found' };
    });
    this.route('GET /v1/billing/subscriptions/:id', (req) => this.authorized(req.headers.authorization, () => this.sub(req.params.id!, (s) => ({ json: s }))));
    for (const [verb, status] of [
      ['cancel', 'CANCELLED'],
      ['suspend', 'SUSPENDED'],
      ['activate', 'ACTIVE'],
    ] as const) {
      this.route(`POST /v1/billing/subscriptions/:id/${verb}`, (req) =>
        this.authorized(req.headers.authorization, () =>
          this.sub(req.params.id!, (s) => {
            s.status = status;
            return { status: 204 };
          }),
        ),
      );
    }
    this.route('POST /v1/billing/subscriptions/:id/revise', (req) =>
      this.authorized(req.headers.authorization, () =>
        this.sub(req.params.id!, (s) => {
          s.plan_id = (req.body as { plan_id: string }).plan_id;
          return { json: { plan_id: s.plan_id, links: [{ rel: 'approve', href: `${this.base}/approve/${s.id}`, method: 'GET' }] } };
        }),
      ),
    );
    this.route('GET /v1/billing/subscriptions/:id/transactions', (req) =>
      this.authorized(req.headers.authorization, () =>
        this.sub(req.params.id!, (sub) => {
          const from = Date.parse(req.query.get('start_time') ?? '');
          const to = Date.parse(req.query.get('end_time') ?? '');
          if (Number.isNaN(from) || Number.isNaN(to)) return { status: 400, json: { name: 'INVALID_REQUEST' } };
          const transactions = (this.transactions.get(sub.id) ?? []).filter((t) => Date.parse(t.time) >= from && Date.parse(t.time) <= to);
          return { json: { transactions, total_items: transactions.length, total_pages: 1 } };
        }),
      ),
    );
    this.route('GET /v1/payments/sale/:id', (req) =>
      this.authorized(req.headers.authorization, () => {
        const sale = this.sales.get(req.params.id!);
        return sale ? { json: { ...sale, create_time: '2026-03-01T11:00:00Z', links: [] } } : { status: 404, json: { name: 'INVALID_RESOURCE_ID', message: 'Requested resource ID was not found.' } };
      }),
    );
    this.route('POST /v2/payments/captures/:id/refund', (req) =>
      this.authorized(req.headers.authorization, () => ({ status: 201, json: { id: `REFUND-${++this.n}`, status: 'COMPLETED' } })),
    );
  }

  /** Every access token stops being accepted (as a revocation or an early expiry would). */
  revokeTokens(): void {
    this.tokens.clear();
  }

  addSubscription(s: Partial<FakePaypalSubscription> & { id: string; plan_id: string }): FakePaypalSubscription {
    const sub: FakePaypalSubscription = { status: 'ACTIVE', custom_id: null, billing_info: { next_billing_time: null }, ...s };
    this.subscriptions.set(sub.id, sub);
    return sub;
  }

  /** Records a payment of the subscription (its transaction id is the refundable capture). */
  addPayment(subscriptionId: string, p: { id: string; time: Date; status?: string; value?: string }): void {
    const list = this.transactions.get(subscriptionId) ?? [];
    list.push({ id: p.id, status: p.status ?? 'COMPLETED', time: p.time.toISOString(), amount_with_breakdown: { gross_amount: { currency_code: 'USD', value: p.value ?? '30.00' } } });
    this.transactions.set(subscriptionId, list);
  }

  private authorized(header: string | string[] | undefined, fn: () => { status?: number; json?: unknown }) {
    const token = typeof header === 'string' && header.startsWith('Bearer ') ? header.slice(7) : '';
    if (!this.tokens.has(token)) return { status: 401, json: { error: 'invalid_token' } };
    return fn();
  }

  private sub(id: string, fn: (s: FakePaypalSubscription) => { status?: number; json?: unknown }) {
    const s = this.subscriptions.get(id);
    return s ? fn(s) : { status: 404, json: { name: 'RESOURCE_NOT_FOUND' } };
  }
}
