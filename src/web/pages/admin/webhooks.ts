import type { FastifyInstance, FastifyReply } from 'fastify';
import { isApiError } from '../../../http/errors.js';
import { parseTimestamp } from '../../../lib/time.js';
import { OUTBOUND_EVENT_TYPES } from '../../../outbound/catalogue.js';
import {
  createEndpoint,
  deleteEndpoint,
  endpointAttempts,
  findEndpoint,
  listEndpoints,
  publicEndpoint,
  redeliver,
  rotateEndpointSecret,
  sendTestEvent,
  updateEndpoint,
  type PublicEndpoint,
} from '../../../outbound/webhooks/endpoints.js';
import type { Services } from '../../../services.js';
import { bodyField, bodyValues, checkPostedForm, fieldBlock, guardPage, sendViewerPage, tokenInput, type Viewer } from '../../forms.js';
import { html } from '../../html.js';
import { adminNav } from './nav.js';

const FORM = 'webhooks';
const SUPERADMIN = 10;
const SUBSCRIBABLE = OUTBOUND_EVENT_TYPES.filter((t) => t !== 'test');

interface CreateForm {
  url: string;
  description: string;
  event_types: string[];
}
const EMPTY: CreateForm = { url: '', description: '', event_types: [] };

function stateOf(e: PublicEndpoint): string {
  if (e.enabled) return e.failing_since ? `failing since ${e.failing_since}` : 'enabled';
  return e.disabled_reason === 'gone' ? 'disabled (410 Gone)' : e.disabled_reason === 'failing' ? 'disabled (failing 5 days)' : 'disabled';
}

/**
 * Admin webhooks (DESIGN 15), superadmins only: endpoints with their state, create (the secret shown once),
 * test, enable or disable, rotate the secret, delete; per endpoint, the delivery log with status and
 * duration, and redelivery of one event or of every failure since a time.
 */
export function webhooksAdminPage(web: FastifyInstance, services: Services): void {
  const { db, clock, settings } = services;
  const deps = () => ({ db, clock, settings });
  const opButton = (viewer: Viewer, id: number, op: string, label: string) =>
    html`<form class="inline" method="post" action="/admin/webhooks/${id}/${op}">${tokenInput(viewer, FORM)}<button class="link" type="submit" data-action="${op}">${label}</button></form>`;

  async function renderList(reply: FastifyReply, viewer: Viewer, o: { form?: CreateForm; errors?: Record<string, string>; secret?: { endpoint: PublicEndpoint; secret: string; rotated?: boolean }; notice?: string; status?: number } = {}) {
    const form = o.form ?? EMPTY;
    const errors = o.errors ?? {};
    const endpoints = await listEndpoints(db);
    const row = (e: PublicEndpoint) => html`<tr data-endpoint="${e.endpoint_id}">
  <td class="url" data-label="URL" style="overflow-wrap:anywhere"><a href="/admin/webhooks/${e.endpoint_id}">${e.url}</a>${e.description ? html`<div class="help">${e.description}</div>` : ''}</td>
  <td data-label="Events">${e.event_types.length ? e.event_types.join(', ') : 'all'}</td>
  <td class="state" data-label="State">${stateOf(e)}</td>
  <td class="actions"><a href="/admin/webhooks/${e.endpoint_id}">Delivery log</a>
    ${opButton(viewer, e.endpoint_id, 'test', 'Send test')}
    ${opButton(viewer, e.endpoint_id, e.enabled ? 'disable' : 'enable', e.enabled ? 'Disable' : 'Enable')}
    ${opButton(viewer, e.endpoint_id, 'rotate', 'Rotate secret')}
    ${opButton(viewer, e.endpoint_id, 'delete', 'Delete')}</td>
</tr>`;
    const body = html`${adminNav()}
${o.secret
  ? html`<div class="card notice" id="issued-secret"><p><strong>${o.secret.rotated ? 'Secret rotated' : 'Endpoint created'}.</strong> Copy the signing secret now: it is shown only once.${o.secret.rotated ? ' The previous secret keeps signing beside it for 24 hours.' : ''}</p>
      <p>${o.secret.endpoint.url}</p><p class="secret" id="new-secret">${o.secret.secret}</p></div>`
  : ''}
${o.notice ? html`<div class="card notice" id="webhook-notice">${o.notice}</div>` : ''}
<div class="card">
  <h2>Webhook endpoints</h2>
  <p class="help">Every membership change is sent, signed (Standard Webhooks), to the endpoints whose event filter takes it, and retried for about three days. See the API guide, "Outbound events".</p>
  ${endpoints.length
    ? html`<table id="endpoints" class="stack"><thead><tr><th>URL</th><th>Events</th><th>State</th><th></th></tr></thead><tbody>${endpoints.map(row)}</tbody></table>`
    : html`<p id="no-endpoints">No endpoints yet.</p>`}
</div>
<div class="card narrow">
  <h2>Add an endpoint</h2>
  <form method="post" action="/admin/webhooks" novalidate>
    ${tokenInput(viewer, FORM)}
    ${fieldBlock('url', 'URL', html`<input id="url" name="url" type="url" placeholder="https://example.com/webhooks" value="${form.url}">`, errors.url, 'https only; private and loopback addresses are refused unless the setting webhook_allow_private_targets is on.')}
    ${fieldBlock('description', 'Description', html`<input id="description" name="description" type="text" maxlength="255" value="${form.description}">`, errors.description)}
    <fieldset><legend>Events (none ticked: all)</legend>
      ${SUBSCRIBABLE.map((t) => html`<label class="check"><input type="checkbox" name="event_types" value="${t}" ${form.event_types.includes(t) ? html`checked` : ''}> ${t}</label> `)}
      ${errors.event_types ? html`<div class="field-error">${errors.event_types}</div>` : ''}
    </fieldset>
    <button class="primary" type="submit">Add endpoint</button>
  </form>
</div>`;
    return sendViewerPage(reply, viewer, 'Webhooks', body, o.status ?? 200, { wide: true });
  }

  async function renderEndpoint(reply: FastifyReply, viewer: Viewer, id: number, o: { notice?: string; error?: string; status?: number } = {}) {
    const endpoint = publicEndpoint(await findEndpoint(db, id));
    const attempts = await endpointAttempts(db, id, 200);
    const ok = (code: number | null) => code !== null && code >= 200 && code < 300;
    const row = (a: (typeof attempts)[number]) => html`<tr class="${ok(a.status_code) ? 'ok' : 'failed'}">
  <td class="time" data-label="Time">${a.attempt_time}</td>
  <td data-label="Event"><code>${a.event_id}</code> ${a.type}</td>
  <td class="status" data-label="Status">${a.status_code ?? 'no answer'}</td>
  <td data-label="Duration">${a.duration_ms} ms</td>
  <td data-label="Answer">${a.error ?? a.response?.slice(0, 120) ?? ''}</td>
  <td class="actions"><form class="inline" method="post" action="/admin/webhooks/${id}/redeliver">${tokenInput(viewer, FORM)}<input type="hidden" name="event_id" value="${a.event_id}"><button class="link" type="submit" data-action="redeliver">Redeliver</button></form></td>
</tr>`;
    const body = html`${adminNav()}
<p><a href="/admin/webhooks">← All endpoints</a></p>
${o.notice ? html`<div class="card notice" id="webhook-notice">${o.notice}</div>` : ''}
${o.error ? html`<div class="card"><p class="error" id="webhook-error">${o.error}</p></div>` : ''}
<div class="card">
  <h2 style="overflow-wrap:anywhere">${endpoint.url}</h2>
  <p>${endpoint.description}</p>
  <p>State: <span class="state">${stateOf(endpoint)}</span>. Events: ${endpoint.event_types.length ? endpoint.event_types.join(', ') : 'all'}.</p>
  <p>${opButton(viewer, id, 'test', 'Send test event')} · ${opButton(viewer, id, endpoint.enabled ? 'disable' : 'enable', endpoint.enabled ? 'Disable' : 'Enable')}</p>
  <form method="post" action="/admin/webhooks/${id}/redeliver" class="inline-fields">
    ${tokenInput(viewer, FORM)}
    <label for="since">Redeliver every failure since (UTC)</label>
    <input id="since" name="since" type="text" placeholder="YYYY-MM-DD HH:MM:SS" value="${endpoint.failing_since ?? ''}">
    <button type="submit" data-action="redeliver-since">Redeliver failures</button>
  </form>
</div>
<div class="card">
  <h2>Delivery log</h2>
  <p class="help">Every attempt of the last 30 days, newest first; a delivery is retried at once, then after 5 s, 5 min, 30 min, 2 h, 5 h, 10 h, 14 h, 20 h and 24 h.</p>
  ${attempts.length
    ? html`<table id="attempts" class="stack"><thead><tr><th>Time</th><th>Event</th><th>Status</th><th>Duration</th><th>Answer</th><th></th></tr></thead><tbody>${attempts.map(row)}</tbody></table>`
    : html`<p id="no-attempts">Nothing sent yet.</p>`}
</div>`;
    return sendViewerPage(reply, viewer, `Webhook ${id}`, body, o.status ?? 200, { wide: true });
  }

  const idOf = (raw: string) => (/^[1-9]\d{0,9}$/.test(raw) ? Number(raw) : null);
  const message = (e: unknown): string => {
    if (!isApiError(e)) throw e;
    const fields = Object.values(e.validationErrors ?? {});
    return fields.length ? fields.join('; ') : e.message;
  };

  web.get('/admin/webhooks', async (request, reply) => {
    const viewer = await guardPage(request, reply, services, SUPERADMIN);
    if (!viewer) return reply;
    return renderList(reply, viewer);
  });

  web.post('/admin/webhooks', async (request, reply) => {
    const viewer = await guardPage(request, reply, services, SUPERADMIN);
    if (!viewer) return reply;
    if (!(await checkPostedForm(request, reply, viewer, FORM))) return reply;
    const form: CreateForm = { url: bodyField(request, 'url').trim(), description: bodyField(request, 'description').trim(), event_types: bodyValues(request, 'event_types') };
    try {
      const created = await createEndpoint(deps(), form);
      return renderList(reply, viewer, { secret: created });
    } catch (e) {
      if (!isApiError(e)) throw e;
      return renderList(reply, viewer, { form, errors: e.validationErrors ?? { url: e.message }, status: 422 });
    }
  });

  web.get('/admin/webhooks/:id', async (request, reply) => {
    const viewer = await guardPage(request, reply, services, SUPERADMIN);
    if (!viewer) return reply;
    const id = idOf((request.params as { id: string }).id);
    if (id === null || !(await db.selectFrom('whe_webhook_endpoints').select('whe_webhook_endpoint_id').where('whe_webhook_endpoint_id', '=', id).executeTakeFirst())) {
      return sendViewerPage(reply, viewer, 'Not found', html`${adminNav()}<div class="card"><p class="error">No such webhook endpoint.</p></div>`, 404);
    }
    return renderEndpoint(reply, viewer, id);
  });

  web.post('/admin/webhooks/:id/:op', async (request, reply) => {
    const viewer = await guardPage(request, reply, services, SUPERADMIN);
    if (!viewer) return reply;
    if (!(await checkPostedForm(request, reply, viewer, FORM))) return reply;
    const { op } = request.params as { id: string; op: string };
    const id = idOf((request.params as { id: string }).id);
    if (id === null || !['test', 'enable', 'disable', 'rotate', 'delete', 'redeliver'].includes(op)) return reply.code(404).send('Not found');
    let notice: string;
    try {
      if (op === 'rotate') return renderList(reply, viewer, { secret: { ...(await rotateEndpointSecret(deps(), id)), rotated: true } });
      if (op === 'delete') {
        await deleteEndpoint(db, id);
        return renderList(reply, viewer, { notice: 'Endpoint deleted.' });
      }
      if (op === 'test') {
        const { event_id } = await db.transaction().execute((trx) => sendTestEvent({ db: trx, clock, settings }, id));
        notice = `Test event ${event_id} queued; it appears in the log below within seconds.`;
      } else if (op === 'enable' || op === 'disable') {
        await updateEndpoint(deps(), id, { enabled: op === 'enable' });
        notice = op === 'enable' ? 'Endpoint enabled.' : 'Endpoint disabled.';
      } else {
        const eventId = bodyField(request, 'event_id').trim();
        const sinceText = bodyField(request, 'since').trim();
        const since = sinceText ? parseTimestamp(sinceText) : null;
        if (!eventId && !since) return renderEndpoint(reply, viewer, id, { error: 'Give a time as YYYY-MM-DD HH:MM:SS (UTC).', status: 422 });
        const { redelivered } = await redeliver(deps(), eventId ? { event_id: eventId, endpoint_id: id } : { endpoint_id: id, since });
        notice = `${redelivered} ${redelivered === 1 ? 'delivery' : 'deliveries'} due again.`;
      }
    } catch (e) {
      return renderEndpoint(reply, viewer, id, { error: message(e), status: 422 }).catch(() => reply.code(404).send('Not found'));
    }
    return renderEndpoint(reply, viewer, id, { notice });
  });
}
