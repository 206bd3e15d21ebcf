import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { mailerFromSettings, OutboxMailer, smtpOptionsFromSettings } from '../../../mail/mailer.js';
import { loadTemplate, loadTemplates, resetTemplate, saveTemplate, setTemplateActive } from '../../../outbound/emails/template-store.js';
import {
  htmlContent,
  isMemberEmailKey,
  PLACEHOLDERS,
  renderEmail,
  sampleValues,
  unknownPlaceholders,
  type MemberEmailKey,
  type MemberEmailTemplate,
} from '../../../outbound/emails/templates.js';
import type { Services } from '../../../services.js';
import { bodyChecked, bodyField, checkboxInput, checkPostedForm, fieldBlock, guardPage, sendViewerPage, tokenInput, type Viewer } from '../../forms.js';
import { flashNotice, setFlash, takeFlash } from '../../flash.js';
import { html, raw } from '../../html.js';
import type { SignedInUser } from '../../viewer.js';
import { adminNav } from './nav.js';

/** Member emails are the site speaking to every member: superadmins only, like the webhooks. */
const SUPERADMIN = 10;
const MAX_BODY = 20_000;

type Draft = Pick<MemberEmailTemplate, 'subject' | 'body' | 'active'>;

/** Where mail goes now, for the notice on both mail pages. */
export function mailTransportNotice(services: Pick<Services, 'settings'>, where: 'emails' | 'outbox' = 'emails') {
  const smtp = smtpOptionsFromSettings(services.settings);
  return smtp
    ? html`<p class="help" id="mail-transport">Mail is sent over SMTP (${smtp.host}:${String(smtp.port)})${where === 'outbox' ? ': new messages are no longer kept here' : ''}.</p>`
    : html`<p class="notice" id="mail-transport">No SMTP server is set (<code class="ident">smtp_url</code>): every message is kept ${where === 'outbox' ? 'here' : html`in the <a href="/admin/outbox">outbox</a>`} instead of being sent.</p>`;
}

/** /admin/emails: the member emails with their switches; one page per template to edit, preview and test-send it. */
export function memberEmailsAdminPages(web: FastifyInstance, services: Services): void {
  const { db, clock, settings } = services;

  const values = (user: SignedInUser) =>
    sampleValues({ siteName: settings.string('site_name'), baseUrl: services.config.baseUrl }, { firstName: user.usr_first_name, lastName: user.usr_last_name ?? '', email: user.usr_email });

  web.get('/admin/emails', async (request, reply) => {
    const viewer = await guardPage(request, reply, services, SUPERADMIN);
    if (!viewer) return reply;
    const templates = await loadTemplates(db);
    const welcomeOn = settings.bool('email_welcome_active');
    const reminderDays = settings.int('renewal_reminder_days');
    const row = (t: (typeof templates)[number]) => {
      const held = t.key === 'welcome' && !welcomeOn ? html` <span class="help">(held: email_welcome_active is off)</span>` : t.key === 'renewal_reminder' && reminderDays === 0 ? html` <span class="help">(held: renewal_reminder_days is 0)</span>` : '';
      return html`<tr data-template="${t.key}">
  <td><a href="/admin/emails/${t.key}">${t.title}</a>${t.edited ? html` <span class="help">edited</span>` : ''}<div class="help">${t.trigger}</div></td>
  <td data-label="Subject">${t.subject}</td>
  <td class="state" data-label="State">${t.active ? 'on' : 'off'}${held}</td>
  <td class="actions"><form class="inline" method="post" action="/admin/emails/${t.key}/${t.active ? 'off' : 'on'}">${tokenInput(viewer, 'member-emails')}<button class="link" type="submit">${t.active ? 'Switch off' : 'Switch on'}</button></form></td>
</tr>`;
    };
    const body = html`${adminNav()}
${flashNotice(await takeFlash(db, viewer.session))}
${mailTransportNotice(services)}
<div class="card">
  <p class="help">Members get these emails when their membership changes, at most once per change. Each is plain text with a simple HTML version carrying the site name (<code class="ident">site_name</code>).
  The welcome also needs the setting <code class="ident">email_welcome_active</code> (now ${welcomeOn ? 'on' : 'off'}); the renewal reminder goes <code class="ident">renewal_reminder_days</code> (now ${String(reminderDays)}) days before a renewal.</p>
  <table class="stack" id="member-email-templates"><thead><tr><th>Email</th><th>Subject</th><th>State</th><th></th></tr></thead>
  <tbody>${templates.map(row)}</tbody></table>
</div>`;
    return sendViewerPage(reply, viewer, 'Member emails', body, 200, { wide: true });
  });

  web.post('/admin/emails/:key/:state', async (request, reply) => {
    const viewer = await guardPage(request, reply, services, SUPERADMIN);
    if (!viewer) return reply;
    const { key, state } = request.params as { key: string; state: string };
    if (!isMemberEmailKey(key) || (state !== 'on' && state !== 'off')) return reply.callNotFound();
    if (!(await checkPostedForm(request, reply, viewer, 'member-emails'))) return reply;
    await setTemplateActive(db, clock, key, state === 'on');
    const t = await loadTemplate(db, key);
    await setFlash(db, viewer.session, { id: 'template-switched', text: `${t.title}: switched ${state}.` });
    return reply.redirect('/admin/emails', 303);
  });

  const editor = (viewer: Viewer & { user: SignedInUser }, key: MemberEmailKey, title: string, draft: Draft, errors: Record<string, string>, notice: ReturnType<typeof flashNotice>, edited: boolean) => {
    const sample = values(viewer.user);
    const preview = Object.keys(errors).length === 0 ? renderEmail(draft, sample) : null;
    return html`${adminNav()}
<p><a href="/admin/emails">← All member emails</a></p>
${notice}
${Object.keys(errors).length ? html`<p class="error" role="alert">Nothing was saved: fix the fields marked below.</p>` : ''}
<div class="card">
<form method="post" action="/admin/emails/${key}" novalidate id="template-form">
  ${tokenInput(viewer, `member-email-${key}`)}
  ${fieldBlock('subject', 'Subject', html`<input id="subject" name="subject" type="text" maxlength="255" value="${draft.subject}">`, errors.subject)}
  ${fieldBlock('body', 'Body (plain text; a blank line starts a paragraph, links become clickable in the HTML version)', html`<textarea id="body" name="body" rows="12">${draft.body}</textarea>`, errors.body)}
  ${fieldBlock('active', 'Send this email', checkboxInput('active', draft.active))}
  <details class="features"><summary>Placeholders</summary><table><tbody>${Object.entries(PLACEHOLDERS).map(([name, what]) => html`<tr><td><code class="ident">{{${name}}}</code></td><td>${what}</td></tr>`)}</tbody></table></details>
  <button class="primary" type="submit" name="intent" value="save">Save</button>
  <button class="secondary" type="submit" name="intent" value="preview">Preview</button>
  <button class="secondary" type="submit" name="intent" value="test" id="test-send">Send a test to ${viewer.user.usr_email}</button>
  ${edited ? html`<button class="secondary danger" type="submit" name="intent" value="reset">Back to the default</button>` : ''}
</form></div>
${preview
  ? html`<div class="card" id="preview"><h2>Preview</h2><p class="help">With sample data and your name and address.</p>
  <p><strong>Subject:</strong> <span id="preview-subject">${preview.subject}</span></p>
  <div id="preview-html" style="background:#f6f7f9;padding:12px;border-radius:6px;overflow-x:auto">${raw(htmlContent(sample.site_name, draft.body, sample))}</div>
  <details class="features"><summary>Plain text</summary><pre id="preview-text" style="white-space:pre-wrap;overflow-wrap:anywhere">${preview.text}</pre></details></div>`
  : ''}`;
  };

  const keyOf = (request: FastifyRequest) => {
    const key = (request.params as { key: string }).key;
    return isMemberEmailKey(key) ? key : null;
  };

  web.get('/admin/emails/:key', async (request, reply) => {
    const viewer = await guardPage(request, reply, services, SUPERADMIN);
    if (!viewer) return reply;
    const key = keyOf(request);
    if (!key) return reply.callNotFound();
    const t = await loadTemplate(db, key);
    return sendViewerPage(reply, viewer, `Member email: ${t.title}`, editor(viewer, key, t.title, t, {}, flashNotice(await takeFlash(db, viewer.session)), t.edited));
  });

  web.post('/admin/emails/:key', async (request, reply: FastifyReply) => {
    const viewer = await guardPage(request, reply, services, SUPERADMIN);
    if (!viewer) return reply;
    const key = keyOf(request);
    if (!key) return reply.callNotFound();
    if (!(await checkPostedForm(request, reply, viewer, `member-email-${key}`))) return reply;
    const current = await loadTemplate(db, key);
    const intent = bodyField(request, 'intent');
    if (intent === 'reset') {
      await resetTemplate(db, key);
      await setFlash(db, viewer.session, { id: 'template-reset', text: 'Back to the default text.' });
      return reply.redirect(`/admin/emails/${key}`, 303);
    }
    const draft: Draft = { subject: bodyField(request, 'subject').trim(), body: bodyField(request, 'body').replace(/\r\n/g, '\n'), active: bodyChecked(request, 'active') };
    const errors: Record<string, string> = {};
    if (draft.subject === '') errors.subject = 'Is required';
    else if (draft.subject.length > 255) errors.subject = 'Must be at most 255 characters';
    if (draft.body.trim() === '') errors.body = 'Is required';
    else if (draft.body.length > MAX_BODY) errors.body = `Must be at most ${MAX_BODY} characters`;
    for (const field of ['subject', 'body'] as const) {
      const unknown = unknownPlaceholders(draft[field]);
      if (!errors[field] && unknown.length) errors[field] = `Unknown placeholder ${unknown.map((n) => `{{${n}}}`).join(', ')}`;
    }
    const title = `Member email: ${current.title}`;
    if (Object.keys(errors).length) return sendViewerPage(reply, viewer, title, editor(viewer, key, current.title, draft, errors, '', current.edited), 400);
    if (intent === 'preview') return sendViewerPage(reply, viewer, title, editor(viewer, key, current.title, draft, {}, '', current.edited));
    if (intent === 'test') {
      const rendered = renderEmail(draft, values(viewer.user));
      const mailer = mailerFromSettings(settings, db, clock);
      let notice;
      try {
        await mailer.send({ to: viewer.user.usr_email, subject: `[Test] ${rendered.subject}`, text: rendered.text, html: rendered.html, template: `test:${key}` });
        notice = flashNotice({
          id: 'test-sent',
          text: mailer instanceof OutboxMailer ? `Test kept in the outbox for ${viewer.user.usr_email} (no SMTP server is set).` : `Test sent to ${viewer.user.usr_email}.`,
        });
      } catch (err) {
        request.log.warn({ err }, 'member email test send failed');
        notice = html`<p class="error" role="alert" id="test-failed">The test could not be sent: ${err instanceof Error ? err.message : String(err)}</p>`;
      }
      // The draft stays in the form (a test does not save it).
      return sendViewerPage(reply, viewer, title, editor(viewer, key, current.title, draft, {}, notice, current.edited));
    }
    await saveTemplate(db, clock, key, draft);
    await setFlash(db, viewer.session, { id: 'template-saved', text: 'Template saved.' });
    return reply.redirect(`/admin/emails/${key}`, 303);
  });
}
