import type { FastifyInstance } from 'fastify';
import { formatTimestamp } from '../../../lib/time.js';
import type { Services } from '../../../services.js';
import { guardPage, sendViewerPage } from '../../forms.js';
import { html } from '../../html.js';
import { adminNav } from './nav.js';
import { mailTransportNotice } from './emails.js';

/** Mail the outbox holds is members' mail (reset links among it): superadmins only. */
const SUPERADMIN = 10;
const PAGE_SIZE = 50;

/**
 * /admin/outbox: every message kept while no SMTP server is set (DESIGN 15), newest first, 50 a page;
 * one message's text and HTML. The HTML is served on its own address into a sandboxed frame, so a
 * message's markup never runs in the admin page.
 */
export function outboxAdminPages(web: FastifyInstance, services: Services): void {
  const { db } = services;

  web.get('/admin/outbox', async (request, reply) => {
    const viewer = await guardPage(request, reply, services, SUPERADMIN);
    if (!viewer) return reply;
    const requested = Number((request.query as { page?: string }).page ?? '1');
    const pageNo = Number.isSafeInteger(requested) && requested >= 1 ? requested : 1;
    const { count } = await db.selectFrom('mob_mail_outbox').select((eb) => eb.fn.countAll<string>().as('count')).executeTakeFirstOrThrow();
    const total = Number(count);
    const pages = Math.max(1, Math.ceil(total / PAGE_SIZE));
    const rows = await db
      .selectFrom('mob_mail_outbox')
      .select(['mob_mail_outbox_id', 'mob_to', 'mob_subject', 'mob_template', 'mob_create_time'])
      .orderBy('mob_create_time', 'desc')
      .orderBy('mob_mail_outbox_id', 'desc')
      .limit(PAGE_SIZE)
      .offset((pageNo - 1) * PAGE_SIZE)
      .execute();
    const body = html`${adminNav()}
${mailTransportNotice(services, 'outbox')}
<div class="card">
  <p class="help" id="outbox-count">${String(total)} message${total === 1 ? '' : 's'} kept${total > PAGE_SIZE ? html`, page ${String(pageNo)} of ${String(pages)}` : ''}.</p>
  ${rows.length === 0
    ? html`<p id="outbox-empty">The outbox is empty.</p>`
    : html`<table class="stack" id="outbox"><thead><tr><th>Time</th><th>To</th><th>Subject</th><th>Template</th></tr></thead><tbody>
  ${rows.map(
    (m) => html`<tr data-message="${String(m.mob_mail_outbox_id)}">
    <td class="time" data-label="Time">${formatTimestamp(m.mob_create_time)}</td>
    <td data-label="To" style="overflow-wrap:anywhere">${m.mob_to}</td>
    <td data-label="Subject"><a href="/admin/outbox/${String(m.mob_mail_outbox_id)}">${m.mob_subject || '(no subject)'}</a></td>
    <td data-label="Template">${m.mob_template ?? '—'}</td></tr>`,
  )}</tbody></table>`}
  <nav class="sub" aria-label="Pages" style="margin-top:1rem">
    ${pageNo > 1 ? html`<a href="/admin/outbox?page=${String(pageNo - 1)}" rel="prev">← Newer</a>` : ''}
    ${pageNo < pages ? html`<a href="/admin/outbox?page=${String(pageNo + 1)}" rel="next">Older →</a>` : ''}
  </nav>
</div>`;
    return sendViewerPage(reply, viewer, 'Outbox', body, 200, { wide: true });
  });

  const messageOf = async (idText: string) => {
    const id = Number(idText);
    if (!Number.isSafeInteger(id) || id <= 0) return undefined;
    return db.selectFrom('mob_mail_outbox').selectAll().where('mob_mail_outbox_id', '=', id).executeTakeFirst();
  };

  web.get('/admin/outbox/:id', async (request, reply) => {
    const viewer = await guardPage(request, reply, services, SUPERADMIN);
    if (!viewer) return reply;
    const m = await messageOf((request.params as { id: string }).id);
    if (!m) return reply.callNotFound();
    const body = html`${adminNav()}
<p><a href="/admin/outbox">← Outbox</a></p>
<div class="card" id="message">
  <table><tbody>
    <tr><th>Time</th><td>${formatTimestamp(m.mob_create_time)}</td></tr>
    <tr><th>From</th><td style="overflow-wrap:anywhere">${m.mob_from}</td></tr>
    <tr><th>To</th><td style="overflow-wrap:anywhere" id="message-to">${m.mob_to}</td></tr>
    <tr><th>Subject</th><td id="message-subject">${m.mob_subject}</td></tr>
    <tr><th>Template</th><td>${m.mob_template ?? '—'}</td></tr>
  </tbody></table>
  ${m.mob_html !== null
    ? html`<h2>HTML</h2><iframe id="message-html" src="/admin/outbox/${String(m.mob_mail_outbox_id)}/html" sandbox="" title="The message as HTML" style="width:100%;height:26rem;border:1px solid #dde1e6;border-radius:6px;background:#fff"></iframe>`
    : ''}
  <h2>Text</h2><pre id="message-text" style="white-space:pre-wrap;overflow-wrap:anywhere;background:#f6f7f9;padding:.75rem;border-radius:6px">${m.mob_text}</pre>
</div>`;
    return sendViewerPage(reply, viewer, 'Outbox message', body);
  });

  web.get('/admin/outbox/:id/html', async (request, reply) => {
    const viewer = await guardPage(request, reply, services, SUPERADMIN);
    if (!viewer) return reply;
    const m = await messageOf((request.params as { id: string }).id);
    if (!m || m.mob_html === null) return reply.callNotFound();
    return reply
      .type('text/html; charset=utf-8')
      .header('cache-control', 'no-store')
      // Shown only in our own page's frame, with no script, no form and no outside request.
      .header('x-frame-options', 'SAMEORIGIN')
      .header('content-security-policy', "sandbox; default-src 'none'; style-src 'unsafe-inline'; img-src data:; frame-ancestors 'self'")
      .send(m.mob_html);
  });
}
