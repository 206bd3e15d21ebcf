import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openCliDatabase } from '../../src/boot/cli-database.js';
import { loadConfig } from '../../src/config.js';
import { TestClock } from '../../src/lib/clock.js';
import { FeatureRegistry } from '../../src/tiers/feature-registry.js';
import { createTier } from '../../src/tiers/tiers.js';
import { onPostgres } from '../helpers/database.js';
import { freePort, pollUntil, programEnv, runGatehouse, scratchPostgres, startServerProcess, tempDataDir, type CliResult, type ServerProcess } from '../helpers/processes.js';
import { FakeStripe } from '../helpers/providers/fake-stripe.js';
import { stripeEvent, stripeSignature } from '../helpers/providers/stripe-signer.js';

const SECRET = 'whsec_cli_reconcile_test';

// `gatehouse store reconcile`, run as the operator runs it against a running server whose card
// subscription ended at the processor (a fake on 127.0.0.1) while the expiry event was lost.
describe(`operator CLI: store reconcile (${onPostgres ? 'PostgreSQL' : 'PGlite through the server socket'})`, { timeout: 60_000 }, () => {
  let env: NodeJS.ProcessEnv;
  let server: ServerProcess;
  let cleanup: () => Promise<void>;
  let userId: number;
  const stripe = new FakeStripe();
  const cli = (...args: string[]): Promise<CliResult> => runGatehouse(args, env);
  const postWebhook = (body: string, headers: Record<string, string>) =>
    fetch(`${server.url}/api/v1/webhooks/card_processor`, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body });

  beforeAll(async () => {
    await stripe.start();
    const data = tempDataDir('gh-cli-reconcile-');
    const db = onPostgres ? await scratchPostgres() : null;
    env = programEnv({ DATA_DIR: data.dir, PORT: String(await freePort()), ...(db ? { DATABASE_URL: db.url } : {}) });
    server = await startServerProcess(env);
    cleanup = async () => {
      await server.stop();
      await db?.drop();
      data.remove();
      await stripe.stop();
    };
    const user = await cli('user', 'create', '--email', 'subscriber@example.com', '--password', 'long enough');
    expect(user.code, user.stderr).toBe(0);
    userId = user.json.user_id;
    for (const [name, value] of [
      ['card_processor_webhook_secret', SECRET],
      ['card_processor_api_key', 'sk_test_cli_reconcile'],
      ['card_processor_api_base', stripe.base],
      ['api_require_https', 'false'],
      ['products_active', 'true'],
      ['subscriptions_active', 'true'],
    ]) {
      expect((await cli('setting', 'set', name!, value!)).code).toBe(0);
    }
    let productId = 0;
    const opened = await openCliDatabase(loadConfig(env), { stdout: () => {}, stderr: () => {}, env });
    try {
      const tierId = await createTier(
        { db: opened.database.db, clock: new TestClock(), registry: FeatureRegistry.load(), createdBy: null },
        { sbt_name: 'gold', sbt_display_name: 'Gold', sbt_tier_level: 30 },
      );
      const row = await opened.database.db
        .insertInto('pro_products')
        .values({ pro_name: 'Gold monthly', pro_link: 'gold-monthly', pro_is_active: true, pro_sbt_subscription_tier_id: tierId, pro_price: 1500, pro_card_price_id: 'price_gold' })
        .returning('pro_product_id')
        .executeTakeFirstOrThrow();
      productId = Number(row.pro_product_id);
    } finally {
      await opened.close();
    }
    const ready = await pollUntil(async () => ((await postWebhook('{}', {})).status === 400 ? true : undefined), 10_000, 200);
    expect(ready).toBe(true);
    // Bought a month ago, paid until an hour ago.
    const now = Math.floor(Date.now() / 1000);
    const metadata = { user_id: String(userId), product_id: String(productId) };
    stripe.addSubscription('sub_cli_r1', 'price_gold', now - 3600, metadata);
    const event = stripeEvent(
      'checkout.session.completed',
      { id: 'cs_cli_r1', object: 'checkout.session', mode: 'subscription', subscription: 'sub_cli_r1', payment_status: 'paid', amount_total: 1500, currency: 'usd', metadata },
      { created: now - 30 * 86400 },
    );
    const body = JSON.stringify(event);
    const res = await postWebhook(body, { 'stripe-signature': stripeSignature(body, SECRET, now) });
    expect(res.status, await res.clone().text()).toBe(200);
    await pollUntil(async () => ((await cli('tier', 'list')).json?.tiers[0]?.member_count === 1 ? true : undefined), 10_000, 200);
    // The processor ended it; the customer.subscription.deleted event never arrived.
    stripe.subscriptions.get('sub_cli_r1')!.status = 'canceled';
  });
  afterAll(async () => cleanup?.());

  it('--dry-run reports the drift and changes nothing; the run applies it through the removal path', async () => {
    const dry = await cli('store', 'reconcile', '--dry-run', '--user-id', String(userId));
    expect(dry.code, dry.stderr).toBe(0);
    const entry = {
      order_item_id: expect.any(Number),
      source: 'card_processor',
      ours: { status: 'active', period_end: expect.stringMatching(/^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d$/) },
      provider: { status: 'expired', state: 'canceled', period_end: expect.stringMatching(/^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d$/) },
      action: 'expired',
    };
    expect(dry.json).toEqual({ checked: 1, drift: [entry], applied: 0, unreachable: [], dry_run: true });
    expect((await cli('tier', 'list')).json.tiers[0]).toMatchObject({ name: 'gold', member_count: 1 });

    const run = await cli('store', 'reconcile', '--source', 'card_processor');
    expect(run.code, run.stderr).toBe(0);
    expect(run.json).toEqual({ checked: 1, drift: [entry], applied: 1, unreachable: [], dry_run: false });
    expect((await cli('tier', 'list')).json.tiers[0]).toMatchObject({ name: 'gold', member_count: 0 });
    // Recently ended, it is still read: it agrees now.
    expect((await cli('store', 'reconcile')).json).toEqual({ checked: 1, drift: [], applied: 0, unreachable: [], dry_run: false });
  });

  it('bad input exits 2 with the reason on stderr', async () => {
    for (const [args, message] of [
      [['store', 'reconcile', '--source', 'carrier_pigeon'], /Unknown source 'carrier_pigeon'/],
      [['store', 'reconcile', '--user-id', 'x'], /--user-id must be an integer/],
      [['store', 'reconcile', '--user-id', '0'], /--user-id must be a positive integer/],
      [['store', 'reconcile', 'extra'], /usage: gatehouse store reconcile/],
    ] as const) {
      const r = await cli(...args);
      expect(r.code, r.stderr).toBe(2);
      expect(r.stdout).toBe('');
      expect(r.stderr).toMatch(message);
    }
  });
});
