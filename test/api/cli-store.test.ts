import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openCliDatabase } from '../../src/boot/cli-database.js';
import { loadConfig } from '../../src/config.js';
import { TestClock } from '../../src/lib/clock.js';
import { FeatureRegistry } from '../../src/tiers/feature-registry.js';
import { createTier } from '../../src/tiers/tiers.js';
import { onPostgres } from '../helpers/database.js';
import { freePort, pollUntil, programEnv, runGatehouse, scratchPostgres, startServerProcess, tempDataDir, type CliResult, type ServerProcess } from '../helpers/processes.js';
import { stripeEvent, stripeSignature } from '../helpers/providers/stripe-signer.js';
import { STAND_IN_SOURCE_SETTINGS } from '../helpers/store.js';

const SECRET = 'whsec_cli_store_test';

// `gatehouse store unresolved | replay`, run as the operator runs them, against a running server that
// received the provider's delivery: PGlite through the server's socket, or a fresh PostgreSQL database.
describe(`operator CLI: store commands (${onPostgres ? 'PostgreSQL' : 'PGlite through the server socket'})`, { timeout: 60_000 }, () => {
  let env: NodeJS.ProcessEnv;
  let server: ServerProcess;
  let cleanup: () => Promise<void>;
  let userId: number;
  let productId: number;
  let eventId: string;
  const cli = (...args: string[]): Promise<CliResult> => runGatehouse(args, env);

  function expectBadInput(r: CliResult, stderrMatch: RegExp) {
    expect(r.code, r.stderr).toBe(2);
    expect(r.stdout).toBe('');
    expect(r.stderr).toMatch(stderrMatch);
  }

  const postWebhook = (body: string, headers: Record<string, string>) =>
    fetch(`${server.url}/api/v1/webhooks/card_processor`, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body });

  beforeAll(async () => {
    const data = tempDataDir('gh-cli-store-');
    const db = onPostgres ? await scratchPostgres() : null;
    env = programEnv({ DATA_DIR: data.dir, PORT: String(await freePort()), ...(db ? { DATABASE_URL: db.url } : {}) });
    server = await startServerProcess(env);
    cleanup = async () => {
      await server.stop();
      await db?.drop();
      data.remove();
    };
    const user = await cli('user', 'create', '--email', 'buyer@example.com', '--password', 'long enough');
    expect(user.code, user.stderr).toBe(0);
    userId = user.json.user_id;
    for (const [name, value] of [
      ['card_processor_webhook_secret', SECRET],
      ['api_require_https', 'false'],
    ]) {
      expect((await cli('setting', 'set', name!, value!)).code).toBe(0);
    }
    // Tiers and products are made by staff on the admin screens; seed them through the same services.
    const opened = await openCliDatabase(loadConfig(env), { stdout: () => {}, stderr: () => {}, env });
    try {
      const tierId = await createTier(
        { db: opened.database.db, clock: new TestClock(), registry: FeatureRegistry.load(), createdBy: null },
        { sbt_name: 'gold', sbt_display_name: 'Gold', sbt_tier_level: 30 },
      );
      const row = await opened.database.db
        .insertInto('pro_products')
        .values({ pro_name: 'Gold monthly', pro_link: 'gold-monthly', pro_is_active: true, pro_sbt_subscription_tier_id: tierId, pro_price: 1500 })
        .returning('pro_product_id')
        .executeTakeFirstOrThrow();
      productId = Number(row.pro_product_id);
    } finally {
      await opened.close();
    }
    // The server picks the settings up within a second: a delivery is then judged on its signature.
    const ready = await pollUntil(async () => ((await postWebhook('{}', {})).status === 400 ? true : undefined), 10_000, 200);
    expect(ready).toBe(true);

    // Delivered while the store is inactive (its default): acknowledged and kept, nothing assigned.
    const now = Math.floor(Date.now() / 1000);
    const event = stripeEvent(
      'checkout.session.completed',
      { id: 'cs_cli_1', object: 'checkout.session', mode: 'subscription', subscription: 'sub_cli_1', payment_status: 'paid', amount_total: 1500, currency: 'usd', metadata: { user_id: String(userId), product_id: String(productId) } },
      { created: now },
    );
    const body = JSON.stringify(event);
    const res = await postWebhook(body, { 'stripe-signature': stripeSignature(body, SECRET, now) });
    expect(res.status, await res.clone().text()).toBe(200);
    expect(((await res.json()) as { data: { outcomes: unknown[] } }).data.outcomes).toEqual([]);
    eventId = event.id;
  });
  afterAll(async () => cleanup?.());

  it('store unresolved lists the event kept while the store was inactive, with its reason', async () => {
    const r = await cli('store', 'unresolved');
    expect(r.code, r.stderr).toBe(0);
    expect(r.json).toEqual({
      count: 1,
      total: 1,
      events: [
        {
          webhook_log_id: expect.any(Number),
          source: 'card_processor',
          event_id: eventId,
          event_type: 'checkout.session.completed',
          reason: 'store_inactive',
          event_time: expect.stringMatching(/^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d$/),
          received_time: expect.stringMatching(/^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d$/),
        },
      ],
    });
  });

  it('store replay refuses while the store is still inactive (exit 1), and applies nothing', async () => {
    const r = await cli('store', 'replay', '--event-id', eventId);
    expect(r.code).toBe(1);
    expect(r.stdout).toBe('');
    expect(r.stderr).toMatch(/store is inactive/);
    expect((await cli('tier', 'list')).json.tiers[0].member_count).toBe(0);
  });

  // A dozen commands, each a process of its own: more time than one command's turn on the socket.
  it('once the store is active, store replay applies the event once; a second replay is refused', { timeout: 180_000 }, async () => {
    expect((await cli('setting', 'set', 'products_active', 'true')).code).toBe(0);
    expect((await cli('setting', 'set', 'subscriptions_active', 'true')).code).toBe(0);
    // The switches alone do not open the store: it needs a configured billing source too.
    expect((await cli('store', 'replay', '--event-id', eventId)).stderr).toMatch(/store is inactive/);
    // '--' ends the options: the PEM value starts with dashes.
    for (const [name, value] of Object.entries(STAND_IN_SOURCE_SETTINGS)) expect((await cli('setting', 'set', '--', name, value)).code).toBe(0);
    const r = await cli('store', 'replay', '--event-id', eventId);
    expect(r.code, r.stderr).toBe(0);
    expect(r.json).toEqual({
      event_id: eventId,
      source: 'card_processor',
      event_type: 'checkout.session.completed',
      replayed: true,
      outcomes: [{ outcome: 'granted', orderItemId: expect.any(Number), grant: 'joined' }],
    });
    expect((await cli('tier', 'list')).json.tiers[0]).toMatchObject({ name: 'gold', member_count: 1 });
    expectBadInput(await cli('store', 'replay', '--event-id', eventId, '--source', 'card_processor'), /already replayed/);
    const listed = await cli('store', 'unresolved');
    expect(listed.json).toEqual({ count: 0, total: 0, events: [] });
  });

  it('bad input exits 2 with the reason on stderr', async () => {
    expectBadInput(await cli('store', 'replay'), /--event-id is required/);
    expectBadInput(await cli('store', 'replay', '--event-id', 'evt_never_received'), /No store event 'evt_never_received'/);
    expectBadInput(await cli('store', 'replay', '--event-id', eventId, '--source', 'carrier_pigeon'), /Unknown source 'carrier_pigeon'/);
    expectBadInput(await cli('store', 'unresolved', 'extra'), /usage: gatehouse store unresolved/);
    expectBadInput(await cli('store'), /usage: gatehouse store unresolved/);
    expectBadInput(await cli('store', 'replay', '--event-id', eventId, '--bogus'), /Unknown option '--bogus'/);
  });
});
