import type { FastifyInstance } from 'fastify';
import { sql } from 'kysely';
import { ApiKeyInputError, createMachineKey, normaliseIpRestriction, revokeKey, type IssuedKey } from '../../../accounts/api-keys.js';
import { mayActOn } from '../../../accounts/authority.js';
import { formatTimestamp, parseTimestamp } from '../../../lib/time.js';
import type { Services } from '../../../services.js';
import { bodyField, checkPostedForm, fieldBlock, guardPage, sendViewerPage, tokenInput, type Viewer } from '../../forms.js';
import { html } from '../../html.js';
import { adminNav } from './nav.js';

interface CreateForm {
  owner_email: string;
  permission: string;
  name: string;
  ip_restriction: string;
  start_time: string;
  expires_time: string;
  active: boolean;
}

const EMPTY: CreateForm = { owner_email: '', permission: '3', name: '', ip_restriction: '', start_time: '', expires_time: '', active: true };
const fmt = (d: Date | null) => (d ? formatTimestamp(d) : '—');

/**
 * Admin API Keys: every key (machine and session), create machine keys (secret shown once), deactivate,
 * revoke. A key acts as its owner, so creating or changing one is acting on the owner's account: staff
 * may not do it for an account with more permission than theirs (a superadmin's key passes the
 * management gates).
 */
export function apiKeysAdminPage(web: FastifyInstance, services: Services): void {
  const { db, clock } = services;

  async function render(viewer: Viewer, form: CreateForm, errors: Record<string, string>, issued?: IssuedKey, status = 200, reply?: Parameters<typeof sendViewerPage>[0]) {
    const keys = await db
      .selectFrom('apk_api_keys')
      .innerJoin('usr_users', 'usr_user_id', 'apk_usr_user_id')
      .select(['apk_api_key_id', 'apk_public_key', 'apk_type', 'apk_name', 'apk_permission', 'apk_last_used_time', 'apk_expires_time', 'apk_is_active', 'apk_delete_time', 'usr_email', 'usr_user_id', 'usr_permission'])
      .orderBy('apk_api_key_id', 'desc')
      .limit(500)
      .execute();
    const row = (k: (typeof keys)[number]) => {
      const state = k.apk_delete_time ? 'revoked' : k.apk_is_active ? 'active' : 'inactive';
      return html`<tr data-key="${k.apk_public_key}">
  <td class="owner">${k.usr_email}</td><td data-label="Type">${k.apk_type}</td><td data-label="Name">${k.apk_name || '—'}</td><td data-label="Permission">${k.apk_permission}</td>
  <td class="time" data-label="Last used">${fmt(k.apk_last_used_time)}</td><td class="time" data-label="Expires">${fmt(k.apk_expires_time)}</td><td class="state" data-label="State">${state}</td>
  <td class="actions">${k.apk_delete_time || !viewer.user || !mayActOn(viewer.user, k)
    ? ''
    : html`<form class="inline" method="post" action="/admin/api-keys/${k.apk_api_key_id}/${k.apk_is_active ? 'deactivate' : 'activate'}">${tokenInput(viewer, 'api-keys')}<button class="link" type="submit">${k.apk_is_active ? 'Deactivate' : 'Activate'}</button></form>
       <form class="inline" method="post" action="/admin/api-keys/${k.apk_api_key_id}/revoke">${tokenInput(viewer, 'api-keys')}<button class="link" type="submit" data-action="revoke">Revoke</button></form>`}</td>
</tr>`;
    };
    const body = html`${adminNav()}
${issued
  ? html`<div class="card notice" id="issued-key"><p><strong>Machine key created.</strong> Copy the secret now: it is shown only once.</p>
      <p>public_key: <span class="secret" id="new-public-key">${issued.publicKey}</span></p>
      <p>secret_key: <span class="secret" id="new-secret-key">${issued.secretKey}</span></p></div>`
  : ''}
<div class="card narrow">
  <h2>Create a machine key</h2>
  <form method="post" action="/admin/api-keys" novalidate>
    ${tokenInput(viewer, 'api-keys')}
    ${fieldBlock('owner_email', 'Owner (user email)', html`<input id="owner_email" name="owner_email" type="email" value="${form.owner_email}">`, errors.owner_email)}
    ${fieldBlock('permission', 'Permission', html`<select id="permission" name="permission">${[
      ['1', '1 — read'],
      ['2', '2 — write only'],
      ['3', '3 — read and write'],
      ['4', '4 — read, write and delete'],
    ].map(([v, l]) => html`<option value="${v}" ${form.permission === v ? html`selected` : ''}>${l}</option>`)}</select>`, errors.permission)}
    ${fieldBlock('name', 'Name', html`<input id="name" name="name" type="text" maxlength="100" value="${form.name}">`, errors.name)}
    ${fieldBlock('ip_restriction', 'IP restriction', html`<input id="ip_restriction" name="ip_restriction" type="text" value="${form.ip_restriction}">`, errors.ip_restriction, 'Comma-separated addresses; empty allows any.')}
    ${fieldBlock('start_time', 'Start time (UTC)', html`<input id="start_time" name="start_time" type="text" placeholder="YYYY-MM-DD HH:MM:SS" value="${form.start_time}">`, errors.start_time)}
    ${fieldBlock('expires_time', 'Expiry time (UTC)', html`<input id="expires_time" name="expires_time" type="text" placeholder="YYYY-MM-DD HH:MM:SS" value="${form.expires_time}">`, errors.expires_time)}
    <label><input type="checkbox" name="active" value="1" ${form.active ? html`checked` : ''}> Active</label>
    <button class="primary" type="submit">Create key</button>
  </form>
</div>
<div class="card">
  <h2>Keys</h2>
  <table id="keys" class="stack keys"><thead><tr><th>Owner</th><th>Type</th><th>Name</th><th>Permission</th><th>Last used</th><th>Expires</th><th>State</th><th></th></tr></thead>
  <tbody>${keys.map(row)}</tbody></table>
</div>`;
    return sendViewerPage(reply!, viewer, 'API keys', body, status, { wide: true });
  }

  web.get('/admin/api-keys', async (request, reply) => {
    const viewer = await guardPage(request, reply, services, 5);
    if (!viewer) return reply;
    return render(viewer, EMPTY, {}, undefined, 200, reply);
  });

  web.post('/admin/api-keys', async (request, reply) => {
    const viewer = await guardPage(request, reply, services, 5);
    if (!viewer) return reply;
    if (!(await checkPostedForm(request, reply, viewer, 'api-keys'))) return reply;
    const form: CreateForm = {
      owner_email: bodyField(request, 'owner_email').trim(),
      permission: bodyField(request, 'permission'),
      name: bodyField(request, 'name').trim(),
      ip_restriction: bodyField(request, 'ip_restriction').trim(),
      start_time: bodyField(request, 'start_time').trim(),
      expires_time: bodyField(request, 'expires_time').trim(),
      active: bodyField(request, 'active') === '1',
    };
    const errors: Record<string, string> = {};
    const owner = form.owner_email
      ? await db.selectFrom('usr_users').select(['usr_user_id', 'usr_permission']).where(sql<string>`lower(usr_email)`, '=', form.owner_email.toLowerCase()).where('usr_delete_time', 'is', null).executeTakeFirst()
      : undefined;
    if (!owner) errors.owner_email = form.owner_email ? 'No user has that email.' : 'Enter the email of the user the key acts as.';
    const forbidden = owner !== undefined && !mayActOn(viewer.user, owner);
    if (forbidden) errors.owner_email = 'You cannot create a key for a user with more permission than yours.';
    const permission = Number(form.permission);
    if (![1, 2, 3, 4].includes(permission)) errors.permission = 'Choose a permission from 1 to 4.';
    if (form.name.length > 100) errors.name = 'At most 100 characters.';
    try {
      normaliseIpRestriction(form.ip_restriction);
    } catch (e) {
      errors.ip_restriction = (e as Error).message;
    }
    const start = form.start_time ? parseTimestamp(form.start_time) : null;
    if (form.start_time && !start) errors.start_time = 'Use YYYY-MM-DD HH:MM:SS (UTC).';
    const expires = form.expires_time ? parseTimestamp(form.expires_time) : null;
    if (form.expires_time && !expires) errors.expires_time = 'Use YYYY-MM-DD HH:MM:SS (UTC).';
    if (start && expires && expires <= start) errors.expires_time = 'The expiry must be after the start.';
    if (Object.keys(errors).length > 0) return render(viewer, form, errors, undefined, forbidden ? 403 : 400, reply);
    try {
      const issued = await createMachineKey(db, {
        userId: owner!.usr_user_id,
        permission,
        name: form.name || null,
        ipRestriction: form.ip_restriction || null,
        startTime: start,
        expiresTime: expires,
        active: form.active,
        now: clock.now(),
      });
      return render(viewer, EMPTY, {}, issued, 200, reply);
    } catch (e) {
      if (e instanceof ApiKeyInputError) return render(viewer, form, { permission: e.message }, undefined, 400, reply);
      throw e;
    }
  });

  web.post('/admin/api-keys/:id/:op', async (request, reply) => {
    const viewer = await guardPage(request, reply, services, 5);
    if (!viewer) return reply;
    if (!(await checkPostedForm(request, reply, viewer, 'api-keys'))) return reply;
    const { id, op } = request.params as { id: string; op: string };
    const keyId = Number(id);
    if (!Number.isInteger(keyId) || !['activate', 'deactivate', 'revoke'].includes(op)) return reply.code(404).send('Not found');
    const owner = await db
      .selectFrom('apk_api_keys')
      .innerJoin('usr_users', 'usr_user_id', 'apk_usr_user_id')
      .select(['usr_user_id', 'usr_permission'])
      .where('apk_api_key_id', '=', keyId)
      .executeTakeFirst();
    if (owner && !mayActOn(viewer.user, owner)) {
      return sendViewerPage(reply, viewer, 'Forbidden', html`${adminNav()}<div class="card"><p class="error">You cannot change a key of a user with more permission than yours.</p></div>`, 403);
    }
    const now = clock.now();
    if (op === 'revoke') await revokeKey(db, keyId, now);
    else
      await db
        .updateTable('apk_api_keys')
        .set({ apk_is_active: op === 'activate', apk_update_time: now })
        .where('apk_api_key_id', '=', keyId)
        .where('apk_delete_time', 'is', null)
        .execute();
    return reply.redirect('/admin/api-keys', 303);
  });
}
