import type { FastifyInstance } from 'fastify';
import { revokeKey } from '../../accounts/api-keys.js';
import { formatTimestamp } from '../../lib/time.js';
import type { Services } from '../../services.js';
import { checkPostedForm, guardPage, sendViewerPage, tokenInput } from '../forms.js';
import { profileNav } from './profile-nav.js';
import { html } from '../html.js';

const fmt = (d: Date | null) => (d ? formatTimestamp(d) : 'never');

/** Profile → App Sessions: the member's own session keys, with revoke. */
export function appSessionsPage(web: FastifyInstance, services: Services): void {
  const { db, clock } = services;

  web.get('/profile/app-sessions', async (request, reply) => {
    const viewer = await guardPage(request, reply, services, 0);
    if (!viewer) return reply;
    const keys = await db
      .selectFrom('apk_api_keys')
      .select(['apk_api_key_id', 'apk_name', 'apk_create_time', 'apk_last_used_time', 'apk_expires_time'])
      .where('apk_usr_user_id', '=', viewer.user.usr_user_id)
      .where('apk_type', '=', 'session')
      .where('apk_delete_time', 'is', null)
      .where((eb) => eb.or([eb('apk_expires_time', 'is', null), eb('apk_expires_time', '>', clock.now())]))
      .orderBy('apk_create_time', 'desc')
      .execute();
    const body = keys.length === 0
      ? html`<div class="card"><p>No apps are signed in to your account.</p></div>`
      : html`<div class="card" style="overflow-x:auto"><table id="app-sessions"><thead><tr><th>Device</th><th>Signed in</th><th>Last used</th><th></th></tr></thead><tbody>
${keys.map((k) => html`<tr data-id="${k.apk_api_key_id}"><td>${k.apk_name ?? 'Unnamed device'}</td><td>${fmt(k.apk_create_time)}</td><td>${fmt(k.apk_last_used_time)}</td>
<td><form class="inline" method="post" action="/profile/app-sessions/${k.apk_api_key_id}/revoke">${tokenInput(viewer, 'app-sessions')}<button class="link" type="submit">Revoke</button></form></td></tr>`)}
</tbody></table></div>`;
    return sendViewerPage(reply, viewer, 'App sessions', html`${profileNav('/profile/app-sessions')}${body}`);
  });

  web.post('/profile/app-sessions/:id/revoke', async (request, reply) => {
    const viewer = await guardPage(request, reply, services, 0);
    if (!viewer) return reply;
    if (!(await checkPostedForm(request, reply, viewer, 'app-sessions'))) return reply;
    const keyId = Number((request.params as { id: string }).id);
    // Only the member's own session keys: anything else is silently not found.
    const own = Number.isInteger(keyId)
      ? await db.selectFrom('apk_api_keys').select('apk_api_key_id').where('apk_api_key_id', '=', keyId).where('apk_usr_user_id', '=', viewer.user.usr_user_id).where('apk_type', '=', 'session').executeTakeFirst()
      : undefined;
    if (own) await revokeKey(db, keyId, clock.now());
    return reply.redirect('/profile/app-sessions', 303);
  });
}
