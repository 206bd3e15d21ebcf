import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { recordEvent } from '../../src/outbound/events.js';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { signIn, type WebClient } from '../helpers/browser-session.js';

// /admin/emails (edit, preview, test-send, switch the member emails) and /admin/outbox (every message
// kept while no SMTP server is set), as a superadmin's browser without JavaScript uses them.

describe('/admin/emails and /admin/outbox', () => {
  let t: TestApp;
  let admin: WebClient;
  let adminEmail: string;
  beforeAll(async () => {
    t = await createTestApp({ config: { baseUrl: 'https://members.example.org' }, settings: { site_name: 'Lighthouse Club' } });
    const a = await t.createUser({ permission: 10, firstName: 'Ada' });
    adminEmail = a.email;
    admin = await signIn(t, a.email, a.password);
  });
  afterAll(async () => t.close());

  const formToken = (page: string, action: string) => admin.formToken(page, action);
  const outboxOf = (email: string) => t.services.db.selectFrom('mob_mail_outbox').selectAll().where('mob_to', '=', email).orderBy('mob_mail_outbox_id').execute();

  it('is for superadmins only', async () => {
    const staff = await t.createUser({ permission: 5 });
    const c = await signIn(t, staff.email, staff.password);
    for (const url of ['/admin/emails', '/admin/emails/payment_failed', '/admin/outbox']) {
      expect((await c.get(url)).statusCode).toBe(403);
    }
    const anonymous = await t.request({ method: 'GET', url: '/admin/emails' });
    expect([anonymous.statusCode, anonymous.headers.location]).toEqual([303, '/login?next=%2Fadmin%2Femails']);
  });

  it('lists every member email with its switch, and says mail is kept in the outbox', async () => {
    const res = await admin.get('/admin/emails');
    expect(res.statusCode).toBe(200);
    const keys = [...res.body.matchAll(/<tr data-template="([a-z_]+)">/g)].map((m) => m[1]);
    expect(keys).toEqual(['welcome', 'payment_failed', 'access_paused', 'renewal_reminder', 'cancellation_scheduled', 'reactivated', 'expired', 'refunded', 'tier_changed']);
    expect(res.body).toContain('id="mail-transport"');
    expect(res.body).toContain('held: email_welcome_active is off');
  });

  it('previews an unsaved edit with sample data, escaping the HTML part, and saves it', async () => {
    const page = await admin.get('/admin/emails/payment_failed');
    expect(page.statusCode).toBe(200);
    expect(page.body).toContain('id="preview-subject">Your payment for Lighthouse Club did not go through<');
    const token = formToken(page.body, '/admin/emails/payment_failed');
    const draft = { form_token: token, subject: 'Payment trouble at {{site_name}}', body: 'Hi {{first_name}} <3,\n\nfix it: {{subscription_url}}', active: 'false' };

    const preview = await admin.postForm('/admin/emails/payment_failed', { ...draft, intent: 'preview' });
    expect(preview.statusCode).toBe(200);
    expect(preview.body).toContain('id="preview-subject">Payment trouble at Lighthouse Club<');
    expect(preview.body).toContain('Hi Ada &lt;3,');
    expect(preview.body).toContain('<a href="https://members.example.org/profile/subscription"');
    // A preview saves nothing.
    expect(await t.services.db.selectFrom('met_member_email_templates').selectAll().execute()).toEqual([]);

    const unknown = await admin.postForm('/admin/emails/payment_failed', { ...draft, body: 'Hello {{nickname}}', intent: 'save' });
    expect(unknown.statusCode).toBe(400);
    expect(unknown.body).toContain('Unknown placeholder {{nickname}}');

    const saved = await admin.postForm('/admin/emails/payment_failed', { ...draft, intent: 'save' });
    expect([saved.statusCode, saved.headers.location]).toEqual([303, '/admin/emails/payment_failed']);
    const stored = await t.services.db.selectFrom('met_member_email_templates').selectAll().execute();
    expect(stored.map((r) => [r.met_key, r.met_subject, r.met_body, r.met_active])).toEqual([['payment_failed', draft.subject, draft.body, false]]);
    const after = await admin.get('/admin/emails/payment_failed');
    expect(after.body).toContain('id="template-saved"');

    // Switched off by the edit: a billing issue now mails nothing; back on from the list, it mails the edited text.
    const member = await t.createUser({ firstName: 'Bo' });
    const billingIssue = () =>
      t.services.db.transaction().execute((trx) => recordEvent(trx, t.clock, 'subscription.billing_issue', { user_id: member.userId }, { userId: member.userId }));
    await billingIssue();
    await t.services.memberEmails.sendDue();
    expect(await outboxOf(member.email)).toEqual([]);
    const list = await admin.get('/admin/emails');
    const on = await admin.postForm('/admin/emails/payment_failed/on', { form_token: formToken(list.body, '/admin/emails/payment_failed/on') });
    expect([on.statusCode, on.headers.location]).toEqual([303, '/admin/emails']);
    await billingIssue();
    await t.services.memberEmails.sendDue();
    const mail = await outboxOf(member.email);
    expect(mail.map((m) => [m.mob_template, m.mob_subject, m.mob_text])).toEqual([
      ['payment_failed', 'Payment trouble at Lighthouse Club', 'Hi Bo <3,\n\nfix it: https://members.example.org/profile/subscription'],
    ]);

    // Back to the default text.
    const edit = await admin.get('/admin/emails/payment_failed');
    const reset = await admin.postForm('/admin/emails/payment_failed', { form_token: formToken(edit.body, '/admin/emails/payment_failed'), intent: 'reset' });
    expect(reset.statusCode).toBe(303);
    expect(await t.services.db.selectFrom('met_member_email_templates').selectAll().execute()).toEqual([]);
  });

  it('sends a test of the draft to the superadmin, kept in the outbox while no SMTP server is set', async () => {
    const page = await admin.get('/admin/emails/renewal_reminder');
    const res = await admin.postForm('/admin/emails/renewal_reminder', {
      form_token: formToken(page.body, '/admin/emails/renewal_reminder'),
      subject: 'Renewing soon: {{product_name}}',
      body: 'Hello {{first_name}}, {{product_name}} renews on {{period_end}}.',
      active: 'true',
      intent: 'test',
    });
    expect(res.statusCode).toBe(200);
    expect(res.body).toContain('id="test-sent"');
    const mail = await outboxOf(adminEmail);
    expect(mail.map((m) => [m.mob_template, m.mob_subject, m.mob_text])).toEqual([
      ['test:renewal_reminder', '[Test] Renewing soon: Gold monthly', 'Hello Ada, Gold monthly renews on 2026-12-31.'],
    ]);
    expect(mail[0]!.mob_html).toContain('Lighthouse Club');
    // A test saves nothing.
    expect(await t.services.db.selectFrom('met_member_email_templates').selectAll().execute()).toEqual([]);
  });

  it('lists the password reset mail in the outbox, with its text viewable', async () => {
    const member = await t.createUser();
    const asked = await t.request({ method: 'POST', url: '/api/v1/action/password_reset_1', payload: { email: member.email } });
    expect(asked.statusCode).toBe(200);
    const [kept] = await outboxOf(member.email);
    const list = await admin.get('/admin/outbox');
    expect(list.statusCode).toBe(200);
    const row = list.body.slice(list.body.indexOf(`<tr data-message="${kept!.mob_mail_outbox_id}">`));
    expect(row).toContain(member.email);
    expect(row).toContain('Reset your Lighthouse Club password');
    expect(row.slice(0, row.indexOf('</tr>'))).toContain('password_reset');

    const one = await admin.get(`/admin/outbox/${kept!.mob_mail_outbox_id}`);
    expect(one.statusCode).toBe(200);
    expect(one.body).toMatch(/id="message-text"[^>]*>Hello [^<]*to choose a new password, open\s+https?:\/\/[^/ ]+\/password-reset\?act_code=[0-9a-f]{48}/);
    expect(one.body).not.toContain('id="message-html"'); // a text-only message
    expect((await admin.get('/admin/outbox/999999999')).statusCode).toBe(404);
  });

  it('shows a member email’s HTML in a sandboxed frame, and pages through the outbox 50 at a time', async () => {
    const member = await t.createUser();
    await t.services.db.transaction().execute((trx) => recordEvent(trx, t.clock, 'subscription.refunded', { user_id: member.userId }, { userId: member.userId }));
    await t.services.memberEmails.sendDue();
    const [kept] = await outboxOf(member.email);
    const one = await admin.get(`/admin/outbox/${kept!.mob_mail_outbox_id}`);
    expect(one.body).toContain(`<iframe id="message-html" src="/admin/outbox/${kept!.mob_mail_outbox_id}/html" sandbox=""`);
    const frame = await admin.get(`/admin/outbox/${kept!.mob_mail_outbox_id}/html`);
    expect(frame.statusCode).toBe(200);
    expect(frame.headers['content-security-policy']).toBe("sandbox; default-src 'none'; style-src 'unsafe-inline'; img-src data:; frame-ancestors 'self'");
    expect(frame.headers['x-frame-options']).toBe('SAMEORIGIN');
    expect(frame.body).toContain('Your Lighthouse Club payment was refunded');

    const now = t.clock.now();
    await t.services.db
      .insertInto('mob_mail_outbox')
      .values(Array.from({ length: 60 }, (_, i) => ({ mob_to: `bulk${i}@example.org`, mob_from: 'no-reply@localhost', mob_subject: `Bulk ${i}`, mob_text: 'x', mob_template: 'bulk', mob_create_time: new Date(now.getTime() + 60_000 + i * 1000) })))
      .execute();
    const first = await admin.get('/admin/outbox');
    expect([...first.body.matchAll(/<tr data-message=/g)]).toHaveLength(50);
    expect(first.body).toContain('Bulk 59');
    expect(first.body).toContain('href="/admin/outbox?page=2" rel="next"');
    const second = await admin.get('/admin/outbox?page=2');
    expect(second.body).toContain('Bulk 0');
    expect(second.body).not.toContain('Bulk 59');
    expect(second.body).toContain('href="/admin/outbox?page=1" rel="prev"');
  });
});
