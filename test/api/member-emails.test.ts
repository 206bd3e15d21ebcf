import { SMTPServer } from 'smtp-server';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { recordEvent, type OutboundEventType } from '../../src/outbound/events.js';
import { fanOutEmails } from '../../src/outbound/emails/fanout.js';
import { MemberEmailSender } from '../../src/outbound/emails/sender.js';
import { saveTemplate } from '../../src/outbound/emails/template-store.js';
import { DEFAULT_TEMPLATES } from '../../src/outbound/emails/templates.js';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { insertSubscription, subscriptionProduct } from '../helpers/subscriptions.js';

// Member emails (DESIGN 15): one email per (event, template, recipient), written with the event, sent by
// the sender through the project's mailer (the outbox while no SMTP server is set), retried on failure.

const DAY = 86_400_000;

describe('member emails', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp({ config: { baseUrl: 'https://members.example.org' }, settings: { site_name: 'Lighthouse Club' } });
  });
  afterAll(async () => t.close());

  // An event that may email its member is written at once, with its row id (the email names it).
  const record = async (type: OutboundEventType, userId: number, data: Record<string, unknown> = {}) => {
    const event = await t.services.db.transaction().execute((trx) => recordEvent(trx, t.clock, type, { user_id: userId, ...data }, { userId }));
    if (event.rowId === null) throw new Error(`${type} was written without its row id`);
    return { ...event, rowId: event.rowId };
  };
  const outboxOf = (email: string) =>
    t.services.db.selectFrom('mob_mail_outbox').selectAll().where('mob_to', '=', email).orderBy('mob_mail_outbox_id').execute();
  const emailsOf = (userId: number) =>
    t.services.db.selectFrom('mem_member_emails').selectAll().where('mem_usr_user_id', '=', userId).orderBy('mem_member_email_id').execute();

  it('mails a member whose payment failed exactly once, with the link to their subscription page, even when the event is fanned out again', async () => {
    const { userId, email } = await t.createUser({ firstName: 'Ada' });
    const event = await record('subscription.billing_issue', userId, { product_name: 'Gold monthly', tier_name: 'Gold', period_end: '2026-03-31 00:00:00' });
    // A redelivery or a replay that fans the same event out again queues nothing new.
    await t.services.db.transaction().execute((trx) => fanOutEmails(trx, t.clock, event));
    await t.services.db.transaction().execute((trx) => fanOutEmails(trx, t.clock, event));
    expect(await emailsOf(userId)).toHaveLength(1);

    expect(await t.services.memberEmails.sendDue()).toEqual({ sent: 1, skipped: 0, retrying: 0, failed: 0 });
    expect(await t.services.memberEmails.sendDue()).toEqual({ sent: 0, skipped: 0, retrying: 0, failed: 0 });
    const mail = await outboxOf(email);
    expect(mail.map((m) => [m.mob_template, m.mob_subject])).toEqual([['payment_failed', 'Your payment for Lighthouse Club did not go through']]);
    const [m] = mail;
    expect(m!.mob_text).toContain('Hello Ada,');
    expect(m!.mob_text).toContain('your Gold monthly subscription did not go through');
    expect(m!.mob_text).toContain('https://members.example.org/profile/subscription');
    expect(m!.mob_html).toContain('Lighthouse Club');
    expect(m!.mob_html).toContain('<a href="https://members.example.org/profile/subscription"');
    const [row] = await emailsOf(userId);
    expect([row!.mem_status, row!.mem_attempts, row!.mem_source, row!.mem_to]).toEqual(['sent', 1, event.id, email]);
  });

  it('writes no email for a change that rolled back', async () => {
    const { userId } = await t.createUser();
    await expect(
      t.services.db.transaction().execute(async (trx) => {
        await recordEvent(trx, t.clock, 'subscription.expired', { user_id: userId }, { userId });
        throw new Error('the change failed');
      }),
    ).rejects.toThrow('the change failed');
    expect(await emailsOf(userId)).toEqual([]);
  });

  it('sends nothing for a switched-off template, and sends again once it is switched back on', async () => {
    const { userId, email } = await t.createUser();
    await saveTemplate(t.services.db, t.clock, 'expired', { ...DEFAULT_TEMPLATES.expired, active: false });
    try {
      await record('subscription.expired', userId);
      expect((await t.services.memberEmails.sendDue()).skipped).toBe(1);
      expect(await outboxOf(email)).toEqual([]);
      expect((await emailsOf(userId)).map((e) => e.mem_status)).toEqual(['skipped']);
    } finally {
      await saveTemplate(t.services.db, t.clock, 'expired', { ...DEFAULT_TEMPLATES.expired, active: true });
    }
    await record('subscription.expired', userId);
    await t.services.memberEmails.sendDue();
    expect((await outboxOf(email)).map((m) => m.mob_template)).toEqual(['expired']);
  });

  it('welcomes a new member only while email_welcome_active is on', async () => {
    // Creating a member writes member.created (DESIGN 15); with welcomes off it queues nothing.
    const quiet = await t.createUser();
    await t.services.memberEmails.sendDue();
    expect(await outboxOf(quiet.email)).toEqual([]);
    expect(await emailsOf(quiet.userId)).toEqual([]);

    await t.services.settings.set('email_welcome_active', true);
    try {
      const greeted = await t.createUser({ firstName: 'Grace' });
      await t.services.memberEmails.sendDue();
      const mail = await outboxOf(greeted.email);
      expect(mail.map((m) => [m.mob_template, m.mob_subject])).toEqual([['welcome', 'Welcome to Lighthouse Club']]);
      // Self-registration then leaves the welcome to member.created: its own short welcome is not sent.
      const reg = await t.request({
        method: 'POST',
        url: '/api/v1/action/register',
        payload: { usr_first_name: 'Reg', usr_email: 'reg-welcome@example.org', password: 'a long enough password 1' },
      });
      expect(reg.statusCode).toBe(200);
      await t.services.memberEmails.sendDue();
      expect((await outboxOf('reg-welcome@example.org')).map((m) => m.mob_template)).toEqual(['welcome']);
    } finally {
      await t.services.settings.set('email_welcome_active', false);
    }
  });

  it('escapes member-supplied values in the HTML part', async () => {
    const { userId, email } = await t.createUser({ firstName: '<b>Eve</b>' });
    await record('subscription.refunded', userId, { product_name: 'Gold & <i>more</i>' });
    await t.services.memberEmails.sendDue();
    const [m] = await outboxOf(email);
    expect(m!.mob_html).toContain('Hello &lt;b&gt;Eve&lt;/b&gt;,');
    expect(m!.mob_html).toContain('Gold &amp; &lt;i&gt;more&lt;/i&gt;');
    expect(m!.mob_html).not.toContain('<b>Eve');
    expect(m!.mob_text).toContain('Hello <b>Eve</b>,');
  });

  it('sends each email once when two senders (two nodes) work at the same time', async () => {
    const members = await Promise.all(Array.from({ length: 30 }, () => t.createUser()));
    for (const m of members) await record('subscription.reactivated', m.userId);
    const other = new MemberEmailSender({ db: t.services.db, clock: t.clock, settings: t.services.settings, baseUrl: 'https://members.example.org' });
    const [a, b] = await Promise.all([t.services.memberEmails.sendDue(), other.sendDue()]);
    expect(a.sent + b.sent).toBe(30);
    const kept = await t.services.db.selectFrom('mob_mail_outbox').select('mob_to').where('mob_template', '=', 'reactivated').execute();
    expect(kept.map((r) => r.mob_to).sort()).toEqual(members.map((m) => m.email).sort());
  });

  it('reminds of a renewal once per period, renewal_reminder_days before it', async () => {
    const { userId, email } = await t.createUser();
    const product = await subscriptionProduct(t, { name: 'Silver yearly', tierId: null, period: 'year' });
    const now = t.clock.now();
    const periodEnd = new Date(now.getTime() + 10 * DAY);
    const item = await insertSubscription(t, userId, product, { source: 'card_processor', price: 5000, periodStart: new Date(now.getTime() - 355 * DAY), periodEnd });
    const runTask = async () => {
      const outcome = await t.services.scheduler.runOne(t.services.scheduler.find('member_renewal_reminders')!);
      await t.services.memberEmails.sendDue();
      return outcome;
    };
    // 10 days before: not yet (the default is 7).
    expect(await runTask()).toEqual({ task: 'member_renewal_reminders', result: { queued: 0 } });
    t.clock.advance(3 * DAY + 60_000);
    expect(await runTask()).toEqual({ task: 'member_renewal_reminders', result: { queued: 1 } });
    t.clock.advance(3600_000);
    expect(await runTask()).toEqual({ task: 'member_renewal_reminders', result: { queued: 0 } });
    let mail = await outboxOf(email);
    expect(mail.map((m) => [m.mob_template, m.mob_subject])).toEqual([['renewal_reminder', `Your Silver yearly subscription renews on ${periodEnd.toISOString().slice(0, 10)}`]]);

    // The next period gets its own reminder.
    const nextEnd = new Date(periodEnd.getTime() + 365 * DAY);
    await t.services.db.updateTable('odi_order_items').set({ odi_subscription_period_start: periodEnd, odi_subscription_period_end: nextEnd }).where('odi_order_item_id', '=', item).execute();
    t.clock.set(new Date(nextEnd.getTime() - 7 * DAY + 60_000));
    expect(await runTask()).toEqual({ task: 'member_renewal_reminders', result: { queued: 1 } });
    mail = await outboxOf(email);
    expect(mail).toHaveLength(2);

    t.clock.set(now);
  });

  it('sends no reminder while renewal_reminder_days is 0, nor for a subscription that will not renew', async () => {
    const start = t.clock.now();
    const product = await subscriptionProduct(t, { tierId: null });
    const a = await t.createUser();
    await insertSubscription(t, a.userId, product, { source: 'card_processor', price: 500, periodStart: start, periodEnd: new Date(start.getTime() + 3 * DAY) });
    const b = await t.createUser();
    await insertSubscription(t, b.userId, product, { source: 'card_processor', price: 500, periodStart: start, periodEnd: new Date(start.getTime() + 3 * DAY), status: 'cancelled' });
    await t.services.settings.set('renewal_reminder_days', 0);
    try {
      const off = await t.services.scheduler.runOne(t.services.scheduler.find('member_renewal_reminders')!);
      expect(off).toEqual({ task: 'member_renewal_reminders', result: { queued: 0 } });
    } finally {
      await t.services.settings.set('renewal_reminder_days', 7);
    }
    await t.services.scheduler.runOne(t.services.scheduler.find('member_renewal_reminders')!);
    expect(await emailsOf(a.userId)).toHaveLength(1);
    expect(await emailsOf(b.userId)).toEqual([]);
  });
});

describe('member emails over SMTP', () => {
  let t: TestApp;
  let smtp: SMTPServer;
  const received: string[] = [];
  let refusals = 2;
  beforeAll(async () => {
    // Answers 451 (try again later) to the first two messages, then 250.
    smtp = new SMTPServer({
      authOptional: true,
      disabledCommands: ['STARTTLS'],
      logger: false,
      onData(stream, _session, callback) {
        const chunks: Buffer[] = [];
        stream.on('data', (c: Buffer) => chunks.push(c));
        stream.on('end', () => {
          if (refusals > 0) {
            refusals--;
            const err = Object.assign(new Error('mailbox busy, try again later'), { responseCode: 451 });
            return callback(err);
          }
          received.push(Buffer.concat(chunks).toString('utf8'));
          callback();
        });
      },
    });
    await new Promise<void>((r) => smtp.listen(0, '127.0.0.1', () => r()));
    t = await createTestApp({ config: { baseUrl: 'https://members.example.org' } });
    await t.services.settings.set('smtp_url', `smtp://127.0.0.1:${(smtp.server.address() as AddressInfo).port}`);
  });
  afterAll(async () => {
    await t.close();
    await new Promise<void>((r) => smtp.close(() => r()));
  });

  it('retries a refused email at 5 s and then 5 min (plus at most 10% jitter), and sends it once accepted', async () => {
    const { userId, email } = await t.createUser();
    await t.services.db.transaction().execute((trx) => recordEvent(trx, t.clock, 'subscription.on_hold', { user_id: userId }, { userId }));
    const row = () => t.services.db.selectFrom('mem_member_emails').selectAll().where('mem_usr_user_id', '=', userId).executeTakeFirstOrThrow();

    const t0 = t.clock.nowMs();
    expect(await t.services.memberEmails.sendDue()).toEqual({ sent: 0, skipped: 0, retrying: 1, failed: 0 });
    let r = await row();
    expect([r.mem_status, r.mem_attempts]).toEqual(['pending', 1]);
    expect(r.mem_last_error).toContain('451');
    const wait1 = r.mem_next_attempt_time.getTime() - t0;
    expect(wait1).toBeGreaterThanOrEqual(5_000);
    expect(wait1).toBeLessThanOrEqual(5_500);

    t.clock.advance(4_000); // not due yet
    expect(await t.services.memberEmails.sendDue()).toEqual({ sent: 0, skipped: 0, retrying: 0, failed: 0 });
    t.clock.advance(1_600);
    const t1 = t.clock.nowMs();
    expect(await t.services.memberEmails.sendDue()).toEqual({ sent: 0, skipped: 0, retrying: 1, failed: 0 });
    r = await row();
    const wait2 = r.mem_next_attempt_time.getTime() - t1;
    expect(wait2).toBeGreaterThanOrEqual(300_000);
    expect(wait2).toBeLessThanOrEqual(330_000);

    t.clock.advance(331_000);
    expect(await t.services.memberEmails.sendDue()).toEqual({ sent: 1, skipped: 0, retrying: 0, failed: 0 });
    r = await row();
    expect([r.mem_status, r.mem_attempts, r.mem_last_error]).toEqual(['sent', 3, null]);
    expect(received).toHaveLength(1);
    expect(received[0]).toContain(`To: ${email}`);
    expect(received[0]).toContain('Content-Type: multipart/alternative');
    expect(received[0]).toContain('Content-Type: text/html');
    // Sent over SMTP: nothing kept in the outbox.
    expect(await t.services.db.selectFrom('mob_mail_outbox').selectAll().where('mob_to', '=', email).execute()).toEqual([]);
  });

  it('gives an email up after the last attempt of the schedule', async () => {
    const { userId } = await t.createUser();
    refusals = 100;
    try {
      await t.services.db.transaction().execute((trx) => recordEvent(trx, t.clock, 'subscription.expired', { user_id: userId }, { userId }));
      const outcomes: string[] = [];
      for (let i = 0; i < 10; i++) {
        const round = await t.services.memberEmails.sendDue();
        outcomes.push(round.failed ? 'failed' : round.retrying ? 'retrying' : 'none');
        t.clock.advance(26.5 * 3600_000); // past the longest delay (24 h + 10%)
      }
      expect(outcomes).toEqual([...Array(9).fill('retrying'), 'failed']);
      const r = await t.services.db.selectFrom('mem_member_emails').selectAll().where('mem_usr_user_id', '=', userId).executeTakeFirstOrThrow();
      expect([r.mem_status, r.mem_attempts]).toEqual(['failed', 10]);
    } finally {
      refusals = 0;
    }
  });
});
