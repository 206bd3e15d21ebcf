import type { FastifyInstance } from 'fastify';
import type { Services } from '../../../services.js';
import { guardPage, sendViewerPage } from '../../forms.js';
import { html } from '../../html.js';
import { adminNav } from './nav.js';
import { featureInUse } from '../../feature-display.js';

/** Admin → Tiers: every live tier (active or not) with its member count and feature coverage. */
export function tierListPage(web: FastifyInstance, services: Services): void {
  const { db } = services;

  web.get('/admin/tiers', async (request, reply) => {
    const viewer = await guardPage(request, reply, services, 5);
    if (!viewer) return reply;
    const tiers = await db
      .selectFrom('sbt_subscription_tiers')
      .leftJoin('grm_group_members', 'grm_sbt_subscription_tier_id', 'sbt_subscription_tier_id')
      .select(['sbt_subscription_tier_id', 'sbt_name', 'sbt_display_name', 'sbt_tier_level', 'sbt_is_active', 'sbt_features'])
      .select((eb) => eb.fn.count<string | number>('grm_group_member_id').as('members'))
      .where('sbt_delete_time', 'is', null)
      // Grouping by the primary key lets the tier's other columns be selected.
      .groupBy('sbt_subscription_tier_id')
      .orderBy('sbt_tier_level')
      .orderBy('sbt_name')
      .execute();
    // The audit counts only features in use: an inactive plugin's features do nothing until it is active.
    const declared = services.tiers.registry.all().filter((d) => featureInUse(services, d)).map((d) => d.key);
    const unset = (features: Record<string, unknown> | null) => declared.filter((k) => !Object.prototype.hasOwnProperty.call(features ?? {}, k)).length;
    const body = html`${adminNav()}
<p><a href="/admin/tiers/new" id="new-tier">New tier</a></p>
<div class="card">
${tiers.length === 0
  ? html`<p>No tiers yet.</p>`
  : html`<table id="tiers" class="stack"><thead><tr><th>Name</th><th>Display name</th><th>Level</th><th>Active</th><th>Members</th><th></th></tr></thead><tbody>
${tiers.map((t) => {
  const missing = unset(t.sbt_features as Record<string, unknown> | null);
  return html`<tr data-tier="${t.sbt_name}">
  <td><a href="/admin/tiers/${t.sbt_subscription_tier_id}"><code class="ident">${t.sbt_name}</code></a>${missing > 0 ? html` <span class="error" title="Features with no explicit value">(${missing} unset)</span>` : ''}</td>
  <td data-label="Display name">${t.sbt_display_name}</td><td data-label="Level">${t.sbt_tier_level}</td><td class="active" data-label="Active">${t.sbt_is_active ? 'yes' : 'no'}</td>
  <td class="members" data-label="Members">${Number(t.members)}</td>
  <td class="actions"><a href="/admin/tiers/${t.sbt_subscription_tier_id}/members">Members</a></td>
</tr>`;
})}
</tbody></table>`}
</div>`;
    return sendViewerPage(reply, viewer, 'Tiers', body);
  });
}
