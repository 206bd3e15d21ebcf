// What changes from one request to the next in a scenario that writes or must miss every cache: used by
// the load generator (bench/load.mjs, through autocannon's setupRequest hook) and by the probe before a
// scenario's load (bench/run.mjs), so the probe sends what the load will.
import { createHmac, randomUUID } from 'node:crypto';

/**
 * Per-request changes, applied in the order a scenario's `vary` lists them. Each takes the request about
 * to be sent ({method, path, headers, body}), the request's number, and the scenario's options.
 */
const CHANGES = {
  /** A fresh Idempotency-Key header. */
  'idempotency-key': (req) => ({ ...req, headers: { ...req.headers, 'idempotency-key': randomUUID() } }),
  /** account_edit's body with another first name, so every request changes the row. */
  'first-name': (req, n) => ({ ...req, body: JSON.stringify({ ...JSON.parse(req.body), usr_first_name: `Bench ${n % 100_000}` }) }),
  /** The next of the writer's members (options.editors): their session key, and their own email in account_edit's body. */
  editor: (req, n, o) => {
    const e = o.editors[n % o.editors.length];
    return { ...req, headers: { ...req.headers, public_key: e.public_key, secret_key: e.secret_key }, body: JSON.stringify({ ...JSON.parse(req.body), usr_email: e.email }) };
  },
  /** The write baseline's body: another name. */
  'item-name': (req, n) => ({ ...req, body: JSON.stringify({ name: `item ${n}` }) }),
  /** A CRUD create's form with another title. */
  'post-title': (req, n) => ({ ...req, body: `${req.body}&pst_title=Bench+post+${n}` }),
  /** A new value of the collection's filter (max_visible_tier_level), so no listing cache has the page. */
  filter: (req, n, o) => ({ ...req, path: `${req.path}${req.path.includes('?') ? '&' : '?'}max_visible_tier_level=${o.filterStart + n}` }),
  /**
   * A card processor purchase (checkout.session.completed, subscription mode) for the next unused buyer
   * and a new event, signed as the processor signs (stripe-signature: t=..., v1=HMAC-SHA256 of "t.body").
   * Null when the buyers have run out.
   */
  purchase: (req, _n, o) => {
    const { buyers, productId, secret } = o.purchase;
    const userId = buyers.next + o.purchases++;
    if (userId > buyers.last) return null;
    const ref = `sub_bench_${userId}`;
    const created = Math.floor(Date.now() / 1000);
    const body = JSON.stringify({
      id: `evt_bench_${userId}`, object: 'event', type: 'checkout.session.completed', created, api_version: '2024-06-20', livemode: false,
      data: { object: { id: `cs_${ref}`, object: 'checkout.session', mode: 'subscription', subscription: ref, payment_intent: null, payment_status: 'paid', status: 'complete', amount_total: 1500, currency: 'usd', metadata: { user_id: String(userId), product_id: String(productId) } } },
    });
    const signature = createHmac('sha256', secret).update(`${created}.${body}`).digest('hex');
    return { ...req, headers: { ...req.headers, 'stripe-signature': `t=${created},v1=${signature}` }, body };
  },
};

/**
 * A request maker for the changes `names` lists. `options.purchase` ({buyers: {next, last}, productId,
 * secret}) is needed by 'purchase', `options.editors` ([{public_key, secret_key, email}]) by 'editor'.
 * `made.purchases` counts the buyers used, `made.shortOf` the requests that found none left (sent
 * unchanged, and counted as bad).
 */
export function requestMaker(names, options = {}) {
  const changes = names.map((name) => {
    if (!CHANGES[name]) throw new Error(`unknown vary '${name}'`);
    return CHANGES[name];
  });
  // Filter values start from a random point, so that separate runs do not repeat each other's.
  const o = { ...options, purchases: 0, filterStart: 100_000_000 + Math.floor(Math.random() * 800_000_000) };
  let n = 0;
  const made = {
    shortOf: 0,
    get purchases() {
      return o.purchases;
    },
    next(req) {
      const i = n++;
      let out = req;
      for (const change of changes) {
        const changed = change(out, i, o);
        if (changed === null) {
          made.shortOf++;
          return out;
        }
        out = changed;
      }
      return out;
    },
  };
  return made;
}
