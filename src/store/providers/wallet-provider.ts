import type { Clock } from '../../lib/clock.js';
import type { Settings } from '../../settings/store.js';

/** A wallet-provider subscription as the store needs it (PayPal Subscriptions protocol). */
export interface WalletSubscription {
  id: string;
  /** APPROVAL_PENDING, APPROVED, ACTIVE, SUSPENDED, CANCELLED, EXPIRED. */
  status: string;
  planId: string | null;
  /** custom_id set at checkout: our store account token. */
  customId: string | null;
  /** The next billing time: the end of the paid period. */
  nextBillingTime: Date | null;
}

/** A completed payment of a subscription (PayPal v1 sale): the billing agreement is the subscription. */
export interface WalletSale {
  id: string;
  billingAgreementId: string | null;
  /** Minor units. */
  amount: number | null;
  currency: string | null;
}

export interface WalletRefund {
  id: string;
  status: string;
}

export class WalletProviderError extends Error {
  constructor(
    message: string,
    readonly status: number,
  ) {
    super(message);
  }
}

/**
 * Outbound calls to the wallet provider's REST API at wallet_provider_api_base, authenticated by an
 * OAuth client-credentials token (wallet_provider_client_id / _secret) cached until shortly before it
 * expires. Every method throws WalletProviderError on a provider error; nothing here touches our database.
 */
export interface WalletProviderClient {
  getSubscription(subscriptionId: string): Promise<WalletSubscription>;
  /** Cancels now (the provider has no cancel-at-period-end; the lifecycle decides when to call). */
  cancel(subscriptionId: string, reason: string): Promise<void>;
  /** Suspends billing; resume re-activates a suspended subscription. */
  suspend(subscriptionId: string, reason: string): Promise<void>;
  resume(subscriptionId: string, reason: string): Promise<void>;
  /** Moves to another plan; the provider prorates. Returns the approval link when the payer must approve. */
  changePlan(subscriptionId: string, planId: string): Promise<{ approvalUrl: string | null }>;
  /**
   * The newest completed payment of the subscription in the year up to `until`; its transaction id is the
   * capture a refund names. null when there is none.
   */
  latestPayment(subscriptionId: string, until: Date): Promise<string | null>;
  /** A subscription's payment by its sale (transaction) id; null when the provider knows none. */
  getSale(saleId: string): Promise<WalletSale | null>;
  /** Refunds a captured payment; amount in minor units with its currency, omitted: the whole capture. */
  refund(captureId: string, amount?: { value: number; currency: string }): Promise<WalletRefund>;
}

const minorToDecimal = (minor: number) => (minor / 100).toFixed(2);

export class RestWalletProviderClient implements WalletProviderClient {
  private token: { value: string; expiresAt: number } | null = null;

  constructor(
    private readonly base: string,
    private readonly clientId: string,
    private readonly clientSecret: string,
    private readonly clock: Clock,
  ) {
    if (!base) throw new Error('wallet_provider_api_base is not set');
  }

  static fromSettings(settings: Settings, clock: Clock): RestWalletProviderClient {
    return new RestWalletProviderClient(
      settings.string('wallet_provider_api_base').replace(/\/+$/, ''),
      settings.string('wallet_provider_client_id'),
      settings.string('wallet_provider_client_secret'),
      clock,
    );
  }

  private async accessToken(): Promise<string> {
    if (this.token && this.token.expiresAt > this.clock.nowMs()) return this.token.value;
    const res = await fetch(`${this.base}/v1/oauth2/token`, {
      method: 'POST',
      headers: {
        authorization: `Basic ${Buffer.from(`${this.clientId}:${this.clientSecret}`).toString('base64')}`,
        'content-type': 'application/x-www-form-urlencoded',
      },
      body: 'grant_type=client_credentials',
      signal: AbortSignal.timeout(20_000),
    });
    if (!res.ok) throw new WalletProviderError(`Wallet provider token request failed (${res.status})`, res.status);
    const body = (await res.json()) as { access_token: string; expires_in: number };
    this.token = { value: body.access_token, expiresAt: this.clock.nowMs() + Math.max(0, body.expires_in - 60) * 1000 };
    return body.access_token;
  }

  /**
   * One API call. A 401 means the provider no longer accepts our token (revoked, rotated, expired early):
   * the token is dropped, a new one fetched, and the call made once more; a second 401 is an error.
   */
  private async call<T>(method: 'GET' | 'POST', path: string, body?: unknown): Promise<T | null> {
    const send = async () =>
      fetch(`${this.base}${path}`, {
        method,
        headers: { authorization: `Bearer ${await this.accessToken()}`, 'content-type': 'application/json', accept: 'application/json' },
        ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
        signal: AbortSignal.timeout(20_000),
      });
    let res = await send();
    if (res.status === 401) {
      await res.body?.cancel();
      this.token = null;
      res = await send();
    }
    if (!res.ok) throw new WalletProviderError(`Wallet provider ${method} ${path} failed (${res.status})`, res.status);
    if (res.status === 204) return null;
    const text = await res.text();
    return text ? (JSON.parse(text) as T) : null;
  }

  async getSubscription(subscriptionId: string): Promise<WalletSubscription> {
    const s = await this.call<{ id: string; status: string; plan_id?: string; custom_id?: string; billing_info?: { next_billing_time?: string } }>(
      'GET',
      `/v1/billing/subscriptions/${encodeURIComponent(subscriptionId)}`,
    );
    if (!s) throw new WalletProviderError('Empty subscription response', 502);
    const next = s.billing_info?.next_billing_time;
    return { id: s.id, status: s.status, planId: s.plan_id ?? null, customId: s.custom_id ?? null, nextBillingTime: next ? new Date(next) : null };
  }

  async cancel(subscriptionId: string, reason: string): Promise<void> {
    await this.call('POST', `/v1/billing/subscriptions/${encodeURIComponent(subscriptionId)}/cancel`, { reason });
  }

  async suspend(subscriptionId: string, reason: string): Promise<void> {
    await this.call('POST', `/v1/billing/subscriptions/${encodeURIComponent(subscriptionId)}/suspend`, { reason });
  }

  async resume(subscriptionId: string, reason: string): Promise<void> {
    await this.call('POST', `/v1/billing/subscriptions/${encodeURIComponent(subscriptionId)}/activate`, { reason });
  }

  async changePlan(subscriptionId: string, planId: string): Promise<{ approvalUrl: string | null }> {
    const res = await this.call<{ links?: Array<{ rel: string; href: string }> }>(
      'POST',
      `/v1/billing/subscriptions/${encodeURIComponent(subscriptionId)}/revise`,
      { plan_id: planId },
    );
    return { approvalUrl: res?.links?.find((l) => l.rel === 'approve')?.href ?? null };
  }

  async latestPayment(subscriptionId: string, until: Date): Promise<string | null> {
    const from = new Date(until.getTime() - 366 * 86_400_000);
    const query = `start_time=${encodeURIComponent(from.toISOString())}&end_time=${encodeURIComponent(until.toISOString())}`;
    const res = await this.call<{ transactions?: Array<{ id?: string; status?: string; time?: string }> }>(
      'GET',
      `/v1/billing/subscriptions/${encodeURIComponent(subscriptionId)}/transactions?${query}`,
    );
    const completed = (res?.transactions ?? []).filter((t) => t.status === 'COMPLETED' && typeof t.id === 'string' && t.id !== '');
    completed.sort((a, b) => Date.parse(b.time ?? '') - Date.parse(a.time ?? ''));
    return completed[0]?.id ?? null;
  }

  async getSale(saleId: string): Promise<WalletSale | null> {
    let s: { id?: string; billing_agreement_id?: string; amount?: { total?: string; currency?: string } } | null;
    try {
      s = await this.call('GET', `/v1/payments/sale/${encodeURIComponent(saleId)}`);
    } catch (e) {
      if (e instanceof WalletProviderError && e.status === 404) return null;
      throw e;
    }
    if (!s?.id) return null;
    const total = Number(s.amount?.total);
    return {
      id: s.id,
      billingAgreementId: s.billing_agreement_id ?? null,
      amount: Number.isFinite(total) ? Math.round(Math.abs(total) * 100) : null,
      currency: s.amount?.currency ? s.amount.currency.toLowerCase() : null,
    };
  }

  async refund(captureId: string, amount?: { value: number; currency: string }): Promise<WalletRefund> {
    const res = await this.call<{ id: string; status: string }>(
      'POST',
      `/v2/payments/captures/${encodeURIComponent(captureId)}/refund`,
      amount ? { amount: { value: minorToDecimal(amount.value), currency_code: amount.currency.toUpperCase() } } : {},
    );
    if (!res) throw new WalletProviderError('Empty refund response', 502);
    return { id: res.id, status: res.status };
  }
}
