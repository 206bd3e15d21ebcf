import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import { Webhook } from 'standardwebhooks';
import { recordEvent, type OutboundEventType } from '../../src/outbound/events.js';
import { WebhookWorker, FAILING_DISABLE_SECONDS } from '../../src/outbound/webhooks/worker.js';
import { checkTarget, isPrivateAddress } from '../../src/outbound/webhooks/targets.js';
import { purgeWebhookAttemptsTask } from '../../src/outbound/webhooks/purge-task.js';
import { RETRY_DELAYS_SECONDS } from '../../src/outbound/retry-schedule.js';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { formBody } from '../helpers/actions.js';
import { startReceiver, type Receiver, type Received } from '../helpers/webhook-receiver.js';
import { gate } from '../helpers/interleave.js';

let t: TestApp;
let admin: Record<string, string>;
let adminEmail: string;
let rx: Receiver;
let worker: WebhookWorker;

beforeAll(async () => {
  t = await createTestApp({ settings: { webhook_allow_private_targets: true } });
  const a = await t.keyHeaders({ userPermission: 10 });
  admin = a.headers;
  adminEmail = (await t.services.db.selectFrom('usr_users').select('usr_email').where('usr_user_id', '=', a.userId).executeTakeFirstOrThrow()).usr_email;
  worker = new WebhookWorker({ db: t.services.db, clock: t.clock, settings: t.services.settings });
});
afterAll(async () => {
  await t.close();
});
beforeEach(async () => {
  rx = await startReceiver();
  // Every test starts with no endpoint.
  await t.services.db.deleteFrom('whe_webhook_endpoints').execute();
  await t.services.settings.set('webhook_allow_private_targets', true);
});
afterEach(async () => {
  await rx.close();
});

const action = (name: string, payload: Record<string, unknown>, headers = admin) =>
  t.request({ method: 'POST', url: `/api/v1/action/${name}`, headers, payload });

async function createEndpoint(extra: Record<string, unknown> = {}): Promise<{ id: number; secret: string }> {
  const res = await action('webhook_endpoint_create', { url: rx.url, description: 'CRM', ...extra });
  expect(res.statusCode, res.body).toBe(200);
  return { id: res.json.data.endpoint_id, secret: res.json.data.secret };
}

function event(type: OutboundEventType, data: Record<string, unknown> = { user_id: 7 }) {
  return t.services.db.transaction().execute((trx) => recordEvent(trx, t.clock, type, data));
}

/** Verifies with the standardwebhooks library, as of the moment the delivery was signed (the test clock). */
function verify(secret: string, r: Received): unknown {
  vi.useFakeTimers({ toFake: ['Date'] });
  try {
    vi.setSystemTime(Number(r.headers['webhook-timestamp']) * 1000);
    return new Webhook(secret).verify(r.body, r.headers);
  } finally {
    vi.useRealTimers();
  }
}

/** An event's row id, found by its id (recordEvent may write the row with the transaction's next statement, without answering it). */
const rowIdOf = async (e: { id: string }) =>
  Number((await t.services.db.selectFrom('obe_outbound_events').select('obe_outbound_event_id').where('obe_uid', '=', e.id).executeTakeFirstOrThrow()).obe_outbound_event_id);

const delivery = async (e: { id: string }) =>
  t.services.db.selectFrom('whd_webhook_deliveries').selectAll().where('whd_obe_outbound_event_id', '=', await rowIdOf(e)).executeTakeFirstOrThrow();

describe('endpoints are managed by superadmins through actions', () => {
  it('creates an endpoint whose secret is whsec_ and 32 random bytes, shown once and never listed', async () => {
    const res = await action('webhook_endpoint_create', { url: rx.url, description: 'CRM', event_types: ['tier.granted', 'member.created'] });
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json.data).toMatchObject({ url: rx.url, description: 'CRM', event_types: ['tier.granted', 'member.created'], enabled: true, disabled_reason: null });
    expect(res.json.data.secret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
    expect(Buffer.from(res.json.data.secret.slice(6), 'base64')).toHaveLength(32);
    const list = await action('webhook_endpoint_list', {});
    expect(list.statusCode).toBe(200);
    expect(list.json.data.endpoints).toHaveLength(1);
    expect(JSON.stringify(list.json.data)).not.toContain('whsec_');
    const row = await t.services.db.selectFrom('whe_webhook_endpoints').select('whe_secret_sealed').executeTakeFirstOrThrow();
    expect(row.whe_secret_sealed).not.toContain(res.json.data.secret.slice(6, 20));
  });

  it('refuses staff below superadmin with 403, and unknown event types with a ValidationError', async () => {
    const staff = await t.staffHeaders({ userPermission: 9 });
    const refused = await action('webhook_endpoint_create', { url: rx.url }, staff.headers);
    expect(refused.statusCode).toBe(403);
    expect(refused.json.errortype).toBe('AuthenticationError');
    const bad = await action('webhook_endpoint_create', { url: rx.url, event_types: ['member.exploded'] });
    expect(bad.statusCode).toBe(422);
    expect(bad.json.errortype).toBe('ValidationError');
    expect(Object.keys(bad.json.validation_errors ?? bad.json.data?.validation_errors ?? {})).toContain('event_types');
  });

  it('takes event_types[] from a form body, updates, disables and deletes', async () => {
    const form = formBody([['url', rx.url], ['event_types[]', 'post.published'], ['event_types[]', 'order.paid']]);
    const res = await t.request({ method: 'POST', url: '/api/v1/action/webhook_endpoint_create', headers: { ...admin, ...form.headers }, payload: form.payload });
    expect(res.statusCode, res.body).toBe(200);
    const id = res.json.data.endpoint_id;
    expect(res.json.data.event_types).toEqual(['post.published', 'order.paid']);
    const off = await action('webhook_endpoint_update', { endpoint_id: id, enabled: false, description: 'paused' });
    expect(off.json.data).toMatchObject({ enabled: false, disabled_reason: 'manual', description: 'paused' });
    const on = await action('webhook_endpoint_update', { endpoint_id: id, enabled: true });
    expect(on.json.data).toMatchObject({ enabled: true, disabled_reason: null });
    expect((await action('webhook_endpoint_delete', { endpoint_id: id })).statusCode).toBe(200);
    const gone = await action('webhook_endpoint_delete', { endpoint_id: id });
    expect(gone.statusCode).toBe(422);
    expect(gone.json.errortype).toBe('ActionError');
    expect(gone.json.data).toEqual({ reason: 'not_found' });
  });

  it('is not served under /management', async () => {
    const res = await t.request({ method: 'GET', url: '/api/v1/management/webhooks', headers: admin });
    expect(res.statusCode).toBe(404);
  });
});

describe('delivery: signed, at least once, with the event id as webhook-id', () => {
  it('delivers each committed event to the endpoints whose filter takes it, signed as Standard Webhooks verifies', async () => {
    const all = await createEndpoint();
    const rx2 = await startReceiver();
    const only = await action('webhook_endpoint_create', { url: rx2.url, event_types: ['tier.granted'] });
    const granted = await event('tier.granted', { user_id: 7, tier: { name: 'Gold', level: 20 } });
    const created = await event('member.created', { user_id: 8, email: 'a@example.com' });
    const report = await worker.runDueDeliveries();
    expect(report).toEqual({ claimed: 3, succeeded: 3, failed: 0, disabled: 0 });
    expect(rx.received.map((r) => r.headers['webhook-id']).sort()).toEqual([granted.id, created.id].sort());
    for (const r of rx.received) {
      const body = verify(all.secret, r) as Record<string, unknown>;
      expect(Object.keys(body).sort()).toEqual(['api_version', 'data', 'id', 'timestamp', 'type']);
      expect(body.api_version).toBe('1.0');
      expect(r.headers['webhook-timestamp']).toBe(String(Math.floor(t.clock.nowMs() / 1000)));
      expect(r.headers['webhook-signature']).toMatch(/^v1,[A-Za-z0-9+/]+=*$/);
    }
    expect(JSON.parse(rx.received.find((r) => r.headers['webhook-id'] === granted.id)!.body)).toEqual({
      id: granted.id, type: 'tier.granted', timestamp: granted.timestamp, api_version: '1.0', data: { user_id: 7, tier: { name: 'Gold', level: 20 } },
    });
    expect(rx2.received.map((r) => r.headers['webhook-id'])).toEqual([granted.id]);
    verify(only.json.data.secret, rx2.received[0]!);
    expect(() => verify(all.secret, rx2.received[0]!)).toThrow();
    await rx2.close();
  });

  it('sends nothing for an event whose transaction rolled back', async () => {
    await createEndpoint();
    await expect(
      t.services.db.transaction().execute(async (trx) => {
        await recordEvent(trx, t.clock, 'member.deleted', { user_id: 9 });
        throw new Error('the change failed');
      }),
    ).rejects.toThrow('the change failed');
    expect(await worker.runDueDeliveries()).toMatchObject({ claimed: 0 });
    expect(rx.received).toHaveLength(0);
  });

  it('retries a 500 after the schedule with the same webhook-id, and logs each attempt with status and duration', async () => {
    const ep = await createEndpoint();
    rx.answer({ status: 500, body: 'boom' });
    const e = await event('subscription.renewed');
    expect(await worker.runDueDeliveries()).toMatchObject({ claimed: 1, failed: 1 });
    expect(await delivery(e)).toMatchObject({ whd_status: 'pending', whd_attempt_count: 1, whd_last_status_code: 500 });
    expect(await worker.runDueDeliveries()).toMatchObject({ claimed: 0 });
    t.clock.advanceSeconds(RETRY_DELAYS_SECONDS[0] * 1.1 + 0.01);
    expect(await worker.runDueDeliveries()).toMatchObject({ claimed: 1, succeeded: 1 });
    expect(rx.received.map((r) => r.headers['webhook-id'])).toEqual([e.id, e.id]);
    expect(rx.received[0]!.body).toBe(rx.received[1]!.body);
    verify(ep.secret, rx.received[1]!);
    expect(await delivery(e)).toMatchObject({ whd_status: 'succeeded', whd_attempt_count: 2, whd_last_status_code: 200 });
    const log = await t.services.db.selectFrom('wha_webhook_attempts').selectAll().where('wha_whe_webhook_endpoint_id', '=', ep.id).orderBy('wha_webhook_attempt_id').execute();
    expect(log.map((a) => [a.wha_status_code, a.wha_response_body])).toEqual([[500, 'boom'], [200, 'ok']]);
    for (const a of log) expect(a.wha_duration_ms).toBeGreaterThanOrEqual(0);
    const endpoint = await t.services.db.selectFrom('whe_webhook_endpoints').selectAll().where('whe_webhook_endpoint_id', '=', ep.id).executeTakeFirstOrThrow();
    expect(endpoint.whe_failing_since_time).toBeNull();
  });

  it('follows the whole schedule and gives up after the tenth attempt', async () => {
    await createEndpoint();
    const e = await event('order.paid');
    rx.answer(...Array.from({ length: 10 }, () => ({ status: 502 })));
    await worker.runDueDeliveries();
    for (const wait of RETRY_DELAYS_SECONDS) {
      t.clock.advanceSeconds(wait * 0.99);
      expect(await worker.runDueDeliveries()).toMatchObject({ claimed: 0 });
      t.clock.advanceSeconds(wait * 0.12);
      expect(await worker.runDueDeliveries()).toMatchObject({ claimed: 1 });
    }
    expect(await delivery(e)).toMatchObject({ whd_status: 'failed', whd_attempt_count: 10 });
    t.clock.advanceSeconds(7 * 86400);
    expect(await worker.runDueDeliveries()).toMatchObject({ claimed: 0 });
  });

  it('honours Retry-After when it asks for longer than the schedule', async () => {
    await createEndpoint();
    rx.answer({ status: 503, headers: { 'retry-after': '3600' } });
    await event('post.published', { post_id: 1 });
    await worker.runDueDeliveries();
    t.clock.advanceSeconds(3590);
    expect(await worker.runDueDeliveries()).toMatchObject({ claimed: 0 });
    t.clock.advanceSeconds(11);
    expect(await worker.runDueDeliveries()).toMatchObject({ claimed: 1, succeeded: 1 });
  });

  it('disables an endpoint that answers 410, writes webhook.endpoint_disabled and tells the superadmins', async () => {
    const ep = await createEndpoint();
    rx.answer({ status: 410 });
    await event('member.updated', { user_id: 1, previous: { email: 'x@example.com' } });
    expect(await worker.runDueDeliveries()).toMatchObject({ failed: 1, disabled: 1 });
    const row = await t.services.db.selectFrom('whe_webhook_endpoints').selectAll().where('whe_webhook_endpoint_id', '=', ep.id).executeTakeFirstOrThrow();
    expect(row).toMatchObject({ whe_enabled: false, whe_disabled_reason: 'gone' });
    const disabled = await t.services.db.selectFrom('obe_outbound_events').select('obe_payload').where('obe_type', '=', 'webhook.endpoint_disabled').orderBy('obe_outbound_event_id', 'desc').executeTakeFirstOrThrow();
    expect((disabled.obe_payload as any).data).toMatchObject({ endpoint_id: ep.id, url: rx.url, reason: 'gone', last_status_code: 410 });
    const mail = await t.services.db.selectFrom('mob_mail_outbox').selectAll().where('mob_template', '=', 'webhook_endpoint_disabled').where('mob_to', '=', adminEmail).orderBy('mob_mail_outbox_id', 'desc').executeTakeFirstOrThrow();
    expect(mail.mob_subject).toContain(`webhook endpoint ${ep.id} disabled`);
    await event('member.updated', { user_id: 1 });
    expect(await worker.runDueDeliveries()).toMatchObject({ claimed: 0 });
    expect(rx.received).toHaveLength(1);
  });

  it('disables an endpoint failing 5 days straight, with the event and a mail to every superadmin', async () => {
    const ep = await createEndpoint();
    const second = await t.createUser({ permission: 10 });
    const rxAll = await startReceiver();
    await action('webhook_endpoint_create', { url: rxAll.url, event_types: ['webhook.endpoint_disabled'] });
    const failing = { status: 500 };
    rx.answer(...Array.from({ length: 20 }, () => failing));
    await event('subscription.billing_issue');
    await worker.runDueDeliveries();
    t.clock.advanceSeconds(FAILING_DISABLE_SECONDS - 60);
    await event('subscription.on_hold');
    expect(await worker.runDueDeliveries()).toMatchObject({ disabled: 0 });
    t.clock.advanceSeconds(61);
    await event('subscription.expired');
    const report = await worker.runDueDeliveries();
    expect(report.disabled).toBe(1);
    const row = await t.services.db.selectFrom('whe_webhook_endpoints').selectAll().where('whe_webhook_endpoint_id', '=', ep.id).executeTakeFirstOrThrow();
    expect(row).toMatchObject({ whe_enabled: false, whe_disabled_reason: 'failing' });
    const to = (await t.services.db.selectFrom('mob_mail_outbox').select('mob_to').where('mob_template', '=', 'webhook_endpoint_disabled').execute()).map((m) => m.mob_to);
    expect(to).toEqual(expect.arrayContaining([adminEmail, second.email]));
    // The other endpoint subscribed to webhook.endpoint_disabled hears of it.
    await worker.runDueDeliveries();
    expect(rxAll.received.map((r) => JSON.parse(r.body).type)).toEqual(['webhook.endpoint_disabled']);
    expect(JSON.parse(rxAll.received[0]!.body).data).toMatchObject({ endpoint_id: ep.id, reason: 'failing' });
    await rxAll.close();
  });
});

describe('redelivery, test events and the event list', () => {
  it('redelivers one event with the same webhook-id, and every failure of an endpoint since a time', async () => {
    const ep = await createEndpoint();
    const ok = await event('tier.removed', { user_id: 3, how: 'expiry' });
    await worker.runDueDeliveries();
    const res = await action('webhook_redeliver', { event_id: ok.id });
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json.data).toEqual({ redelivered: 1 });
    await worker.runDueDeliveries();
    expect(rx.received.map((r) => r.headers['webhook-id'])).toEqual([ok.id, ok.id]);

    t.clock.advanceSeconds(3600);
    const since = new Date(t.clock.nowMs());
    rx.answer({ status: 500 }, { status: 500 });
    const f1 = await event('subscription.refunded');
    const f2 = await event('subscription.paused');
    await worker.runDueDeliveries();
    const sinceText = since.toISOString().slice(0, 19).replace('T', ' ');
    const all = await action('webhook_redeliver', { endpoint_id: ep.id, since: sinceText });
    expect(all.json.data).toEqual({ redelivered: 2 });
    await worker.runDueDeliveries();
    expect(rx.received.slice(-2).map((r) => r.headers['webhook-id']).sort()).toEqual([f1.id, f2.id].sort());
    expect((await delivery(f1)).whd_status).toBe('succeeded');
    const missing = await action('webhook_redeliver', { endpoint_id: ep.id });
    expect(missing.statusCode).toBe(422);
    expect(missing.json.errortype).toBe('ValidationError');
  });

  it('sends a test event to the one endpoint tested', async () => {
    const ep = await createEndpoint({ event_types: ['order.paid'] });
    const rx2 = await startReceiver();
    await action('webhook_endpoint_create', { url: rx2.url });
    const res = await action('webhook_endpoint_test', { endpoint_id: ep.id });
    expect(res.statusCode, res.body).toBe(200);
    await worker.runDueDeliveries();
    expect(rx.received).toHaveLength(1);
    expect(JSON.parse(rx.received[0]!.body)).toMatchObject({ id: res.json.data.event_id, type: 'test', data: { endpoint_id: ep.id } });
    expect(rx2.received).toHaveLength(0);
    await rx2.close();
  });

  it('lists events newest first with their deliveries, page by page', async () => {
    const ep = await createEndpoint();
    const ids: string[] = [];
    for (let i = 0; i < 55; i++) ids.push((await event('member.created', { user_id: i })).id);
    const first = await action('webhook_event_list', {});
    expect(first.statusCode, first.body).toBe(200);
    expect(first.json.data.events).toHaveLength(50);
    expect(first.json.data.events[0]).toMatchObject({ id: ids[54], type: 'member.created', deliveries: [{ endpoint_id: ep.id, status: 'pending', attempt_count: 0 }] });
    const second = await action('webhook_event_list', { cursor: first.json.data.next_cursor });
    expect(second.json.data.events.map((e: any) => e.id).slice(0, 5)).toEqual(ids.slice(0, 5).reverse());
    await worker.runDueDeliveries(10);
  });
});

describe('secret rotation', () => {
  it('signs with the new and the old secret for 24 hours, then with the new one only', async () => {
    const ep = await createEndpoint();
    const rotated = await action('webhook_endpoint_rotate_secret', { endpoint_id: ep.id });
    expect(rotated.statusCode, rotated.body).toBe(200);
    const fresh = rotated.json.data.secret as string;
    expect(fresh).not.toBe(ep.secret);
    await event('tier.granted');
    await worker.runDueDeliveries();
    const during = rx.received[0]!;
    expect(during.headers['webhook-signature']!.split(' ')).toHaveLength(2);
    verify(fresh, during);
    verify(ep.secret, during);
    t.clock.advanceSeconds(24 * 3600 + 1);
    await event('tier.granted');
    await worker.runDueDeliveries();
    const after = rx.received[1]!;
    expect(after.headers['webhook-signature']!.split(' ')).toHaveLength(1);
    verify(fresh, after);
    expect(() => verify(ep.secret, after)).toThrow();
  });
});

describe('SSRF: private targets are refused unless the setting allows them', () => {
  it('refuses loopback, private, link-local and plain http targets at create', async () => {
    await t.services.settings.set('webhook_allow_private_targets', false);
    for (const url of ['https://localhost/hook', 'https://127.0.0.1/hook', 'https://10.1.2.3/hook', 'https://169.254.169.254/latest', 'https://[::1]/hook', 'https://192.168.1.1/', rx.url]) {
      const res = await action('webhook_endpoint_create', { url });
      expect(res.statusCode, url).toBe(422);
      expect(res.json.errortype).toBe('ValidationError');
    }
  });

  it('refuses a host name that resolves to a private address, checking every address', async () => {
    const resolve = async (host: string) =>
      host === 'evil.example' ? [{ address: '93.184.216.34', family: 4 }, { address: '127.0.0.1', family: 4 }] : [{ address: '93.184.216.34', family: 4 }];
    expect(await checkTarget('https://evil.example/x', false, resolve)).toMatchObject({ ok: false });
    expect(await checkTarget('https://fine.example/x', false, resolve)).toMatchObject({ ok: true });
    expect(await checkTarget('http://fine.example/x', false, resolve)).toMatchObject({ ok: false, reason: 'must be an https URL' });
    for (const a of ['10.0.0.1', '172.16.5.4', '192.168.0.1', '127.0.0.53', '169.254.169.254', '100.64.0.1', '0.0.0.0', '::1', 'fe80::1', 'fd00::1', '::ffff:127.0.0.1']) expect(isPrivateAddress(a), a).toBe(true);
    for (const a of ['93.184.216.34', '8.8.8.8', '2606:4700:4700::1111']) expect(isPrivateAddress(a), a).toBe(false);
  });

  it('checks again at delivery: an endpoint saved while allowed is refused once the setting is off', async () => {
    await createEndpoint();
    await t.services.settings.set('webhook_allow_private_targets', false);
    const e = await event('member.created');
    expect(await worker.runDueDeliveries()).toMatchObject({ claimed: 1, failed: 1 });
    expect(rx.received).toHaveLength(0);
    const attempt = await t.services.db.selectFrom('wha_webhook_attempts').innerJoin('whd_webhook_deliveries', 'whd_webhook_delivery_id', 'wha_whd_webhook_delivery_id').select('wha_error').where('whd_obe_outbound_event_id', '=', await rowIdOf(e)).executeTakeFirstOrThrow();
    expect(attempt.wha_error).toMatch(/^refused: /);
  });
});

describe('workers on several nodes', () => {
  it('never hold one delivery at once: two workers share the due deliveries, each delivered once', async () => {
    await createEndpoint();
    const slow = gate();
    const N = 12;
    rx.answer(...Array.from({ length: N }, () => ({ status: 200, wait: slow.opened })));
    const ids = new Set<string>();
    for (let i = 0; i < N; i++) ids.add((await event('order.paid', { order_id: i })).id);
    const other = new WebhookWorker({ db: t.services.db, clock: t.clock, settings: t.services.settings, batchSize: 5 });
    const mine = new WebhookWorker({ db: t.services.db, clock: t.clock, settings: t.services.settings, batchSize: 5 });
    const runs = [mine.runDueDeliveries(), other.runDueDeliveries()];
    // Let both claim while every receiver answer is held open, then release them.
    await new Promise((r) => setTimeout(r, 300));
    slow.open();
    const [a, b] = await Promise.all(runs);
    expect(a!.claimed + b!.claimed).toBe(N);
    expect(rx.received).toHaveLength(N);
    expect(new Set(rx.received.map((r) => r.headers['webhook-id']))).toEqual(ids);
    expect(rx.maxOpenPerId).toBe(1);
  });

  it('a claim lasts a lease: a worker that died after claiming leaves the delivery due again', async () => {
    await createEndpoint();
    const e = await event('member.created');
    // Claim as a worker would, then "die" before the call.
    await t.services.db.updateTable('whd_webhook_deliveries').set({ whd_next_attempt_time: new Date(t.clock.nowMs() + 30_000), whd_claim_token: 'dead' }).where('whd_obe_outbound_event_id', '=', await rowIdOf(e)).execute();
    expect(await worker.runDueDeliveries()).toMatchObject({ claimed: 0 });
    t.clock.advanceSeconds(31);
    expect(await worker.runDueDeliveries()).toMatchObject({ claimed: 1, succeeded: 1 });
    expect(rx.received.map((r) => r.headers['webhook-id'])).toEqual([e.id]);
  });
});

describe('the attempt log', () => {
  it('is kept 30 days', async () => {
    await createEndpoint();
    await event('member.created');
    await worker.runDueDeliveries();
    const count = async () => Number((await t.services.db.selectFrom('wha_webhook_attempts').select((eb) => eb.fn.countAll().as('n')).executeTakeFirstOrThrow()).n);
    expect(await count()).toBe(1);
    t.clock.advanceSeconds(29 * 86400);
    await purgeWebhookAttemptsTask.run({ db: t.services.db, clock: t.clock });
    expect(await count()).toBe(1);
    t.clock.advanceSeconds(86400 + 1);
    expect(await purgeWebhookAttemptsTask.run({ db: t.services.db, clock: t.clock })).toEqual({ deleted: 1 });
    expect(await count()).toBe(0);
  });
});
