// The card processor's API as the purchase scenario needs it (bench/vary.mjs sends checkout.session.completed
// for subscription `sub_bench_<user id>`): what the store reads back while it grants (the subscription,
// its latest invoice and that invoice's payment), answered in the processor's object shapes on 127.0.0.1.
// Without it the store is closed (no API key: a closed store acknowledges a purchase and grants nothing),
// which is not the write the scenario measures. Any other call answers the processor's 404 and is
// counted, so a bench that starts making one is noticed (`unexpected`).
import http from 'node:http';

const DAY = 86_400;

/** The settings of a store open for card purchases through the fake at `base`, signing webhooks with `webhookSecret`. */
export function openStoreSettings(base, webhookSecret) {
  return { products_active: true, subscriptions_active: true, card_processor_webhook_secret: webhookSecret, card_processor_api_key: 'sk_test_bench', card_processor_api_base: base };
}

/** Starts the fake; `priceId` is the product's card price. Resolves to { base, unexpected(), close() }. */
export async function startFakeCardProcessor({ priceId }) {
  const unexpected = [];
  const now = () => Math.floor(Date.now() / 1000);
  const userOf = (subscriptionId) => /^sub_bench_(\d+)$/.exec(subscriptionId)?.[1] ?? null;

  const subscription = (id) => ({
    id, object: 'subscription', status: 'active', customer: `cus_${id}`, cancel_at_period_end: false,
    current_period_start: now(), current_period_end: now() + 30 * DAY, latest_invoice: `in_${id}`, metadata: { user_id: userOf(id) },
    items: { object: 'list', data: [{ id: `si_${id}`, object: 'subscription_item', price: { id: priceId, object: 'price' }, current_period_end: now() + 30 * DAY }] },
  });
  const subscriptionOfInvoice = (invoiceId) => invoiceId.replace(/^in_/, '');
  const invoice = (id) => ({
    id, object: 'invoice', status: 'paid', amount_paid: 1500, currency: 'usd',
    parent: { type: 'subscription_details', subscription_details: { subscription: subscriptionOfInvoice(id) } },
  });
  const invoicePayments = (invoiceId) => ({
    object: 'list', has_more: false, url: '/v1/invoice_payments',
    data: [{ id: `inpay_${invoiceId}`, object: 'invoice_payment', invoice: invoiceId, status: 'paid', payment: { type: 'payment_intent', payment_intent: `pi_${invoiceId}` } }],
  });

  const server = http.createServer((req, res) => {
    req.resume();
    const url = new URL(req.url ?? '/', 'http://fake');
    const answer = (status, body) => {
      res.writeHead(status, { 'content-type': 'application/json' });
      res.end(JSON.stringify(body));
    };
    let m;
    if (req.method === 'GET' && (m = /^\/v1\/subscriptions\/(sub_bench_\d+)$/.exec(url.pathname))) return answer(200, subscription(m[1]));
    if (req.method === 'GET' && (m = /^\/v1\/invoices\/(in_sub_bench_\d+)$/.exec(url.pathname))) return answer(200, invoice(m[1]));
    if (req.method === 'GET' && url.pathname === '/v1/invoice_payments' && url.searchParams.get('invoice')) return answer(200, invoicePayments(url.searchParams.get('invoice')));
    unexpected.push(`${req.method} ${url.pathname}`);
    answer(404, { error: { type: 'invalid_request_error', code: 'resource_missing', message: `No such route: ${req.method} ${url.pathname}` } });
  });
  server.keepAliveTimeout = 60_000;
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    base: `http://127.0.0.1:${server.address().port}`,
    unexpected: () => [...unexpected],
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}
