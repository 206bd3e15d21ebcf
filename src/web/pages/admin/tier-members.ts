import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { sql } from 'kysely';
import { mayActOn } from '../../../accounts/authority.js';
import { likeContains } from '../../../lib/like.js';
import { formatTimestamp } from '../../../lib/time.js';
import type { Services } from '../../../services.js';
import { TierInputError } from '../../../tiers/errors.js';
import { bodyField, checkPostedForm, fieldBlock, guardPage, sendViewerPage, tokenInput, type Viewer } from '../../forms.js';
import { flashNotice, setFlash, takeFlash } from '../../flash.js';
import { html, type SafeHtml } from '../../html.js';
import { adminNav } from './nav.js';

const FORM_NAME = 'tier-members';
const SEARCH_LIMIT = 20;
const METHODS: Record<string, string> = { purchase: 'Purchase', manual: 'Manual', other: 'Other' };


/**
 * Admin → Tier members: who is in the tier, when and how they were assigned, their subscription
 * status; add a user found by email and remove a member. Both are manual assignments made by the tier
 * membership service (the one path that records the change).
 */
export function tierMembersPage(web: FastifyInstance, services: Services): void {
  const { db } = services;

  const loadTier = (id: number) =>
    db
      .selectFrom('sbt_subscription_tiers')
      .select(['sbt_subscription_tier_id', 'sbt_name', 'sbt_display_name', 'sbt_tier_level', 'sbt_is_active'])
      .where('sbt_subscription_tier_id', '=', id)
      .where('sbt_delete_time', 'is', null)
      .executeTakeFirst();
  type TierHead = NonNullable<Awaited<ReturnType<typeof loadTier>>>;

  async function tierFromParams(request: FastifyRequest): Promise<TierHead | undefined> {
    const raw = (request.params as { id: string }).id;
    return /^\d{1,9}$/.test(raw) ? loadTier(Number(raw)) : undefined;
  }

  const notFound = (reply: FastifyReply, viewer: Viewer) => sendViewerPage(reply, viewer, 'Not found', html`${adminNav()}<div class="card"><p>There is no such tier.</p></div>`, 404);

  async function render(reply: FastifyReply, viewer: Viewer, tier: TierHead, opts: { q?: string; error?: string; membersError?: string; notice?: SafeHtml | ''; status?: number } = {}) {
    const members = await db
      .selectFrom('grm_group_members')
      .innerJoin('usr_users', 'usr_user_id', 'grm_foreign_key_id')
      .select(['usr_user_id', 'usr_email', 'usr_first_name', 'usr_last_name', 'grm_assigned_time', 'grm_assignment_method', 'grm_subscription_status'])
      .where('grm_sbt_subscription_tier_id', '=', tier.sbt_subscription_tier_id)
      .orderBy('grm_assigned_time', 'desc')
      .orderBy('usr_user_id')
      .execute();
    const q = (opts.q ?? '').trim();
    const found = q
      ? await db
          .selectFrom('usr_users')
          .leftJoin('grm_group_members', (join) => join.onRef('grm_foreign_key_id', '=', 'usr_user_id').on('grm_sbt_subscription_tier_id', 'is not', null))
          .leftJoin('sbt_subscription_tiers', 'sbt_subscription_tier_id', 'grm_sbt_subscription_tier_id')
          .select(['usr_user_id', 'usr_email', 'usr_first_name', 'usr_last_name', 'sbt_subscription_tier_id', 'sbt_display_name'])
          .where(sql<string>`lower(usr_email)`, 'like', likeContains(q))
          .where('usr_delete_time', 'is', null)
          .orderBy('usr_email')
          .limit(SEARCH_LIMIT)
          .execute()
      : [];
    const name = (u: { usr_first_name: string | null; usr_last_name: string | null }) => [u.usr_first_name, u.usr_last_name].filter(Boolean).join(' ');
    const base = `/admin/tiers/${tier.sbt_subscription_tier_id}/members`;
    const body = html`${adminNav()}
<p><a href="/admin/tiers">← All tiers</a> · <a href="/admin/tiers/${tier.sbt_subscription_tier_id}">Edit ${tier.sbt_display_name}</a></p>
${opts.notice ?? ''}
<div class="card">
  <h2>Add a member</h2>
  ${tier.sbt_is_active ? '' : html`<p class="help">This tier is inactive: members cannot be added until it is active again.</p>`}
  <form method="get" action="${base}">
    ${fieldBlock('q', 'Find a user by email', html`<input id="q" name="q" type="text" inputmode="email" value="${q}" autocomplete="off">`, opts.error, 'Adding moves the user out of any other tier; it is recorded as a manual assignment.')}
    <button class="primary" type="submit">Search</button>
  </form>
  ${q
    ? found.length === 0
      ? html`<p id="search-results">No user’s email contains “${q}”.</p>`
      : html`<table id="search-results" class="stack"><thead><tr><th>Email</th><th>Name</th><th>Current tier</th><th></th></tr></thead><tbody>
${found.map((u) => html`<tr data-email="${u.usr_email}"><td>${u.usr_email}</td><td data-label="Name">${name(u)}</td><td data-label="Current tier">${u.sbt_display_name ?? 'none'}</td>
<td class="actions">${u.sbt_subscription_tier_id === tier.sbt_subscription_tier_id
  ? 'member'
  : html`<form class="inline" method="post" action="${base}">${tokenInput(viewer, FORM_NAME)}<input type="hidden" name="user_id" value="${u.usr_user_id}"><input type="hidden" name="q" value="${q}"><button class="link" type="submit" data-action="add">Add</button></form>`}</td></tr>`)}
</tbody></table>`
    : ''}
</div>
<div class="card" style="overflow-x:auto">
  <h2>Members (${members.length})</h2>
  ${opts.membersError ? html`<p class="field-error" id="members-error" role="alert">${opts.membersError}</p>` : ''}
  ${members.length === 0
    ? html`<p id="no-members">No one is in this tier.</p>`
    : html`<table id="members" class="stack"><thead><tr><th>Member</th><th>Assigned</th><th>How</th><th>Subscription</th><th></th></tr></thead><tbody>
${members.map((m) => html`<tr data-email="${m.usr_email}"><td><a href="/admin/members/${m.usr_user_id}">${m.usr_email}</a><br><span class="help">${name(m)}</span></td>
<td class="assigned" data-label="Assigned">${formatTimestamp(m.grm_assigned_time)}</td><td class="method" data-label="How">${METHODS[m.grm_assignment_method] ?? m.grm_assignment_method}</td><td class="status" data-label="Subscription">${m.grm_subscription_status ?? '—'}</td>
<td class="actions"><form class="inline" method="post" action="${base}/${m.usr_user_id}/remove" data-confirm="Remove ${m.usr_email} from ${tier.sbt_display_name}? They lose the tier’s features now.">${tokenInput(viewer, FORM_NAME)}<button class="link" type="submit" data-action="remove">Remove</button></form></td></tr>`)}
</tbody></table>`}
</div>`;
    return sendViewerPage(reply, viewer, `Members of ${tier.sbt_display_name}`, body, opts.status ?? 200);
  }

  web.get('/admin/tiers/:id/members', async (request, reply) => {
    const viewer = await guardPage(request, reply, services, 5);
    if (!viewer) return reply;
    const tier = await tierFromParams(request);
    if (!tier) return notFound(reply, viewer);
    const query = request.query as Record<string, unknown>;
    return render(reply, viewer, tier, { q: typeof query.q === 'string' ? query.q : '', notice: flashNotice(await takeFlash(db, viewer.session)) });
  });

  web.post('/admin/tiers/:id/members', async (request, reply) => {
    const viewer = await guardPage(request, reply, services, 5);
    if (!viewer) return reply;
    if (!(await checkPostedForm(request, reply, viewer, FORM_NAME))) return reply;
    const tier = await tierFromParams(request);
    if (!tier) return notFound(reply, viewer);
    const q = bodyField(request, 'q');
    const rawId = bodyField(request, 'user_id');
    const userId = /^\d{1,9}$/.test(rawId) ? Number(rawId) : null;
    const refuse = (error: string) => render(reply, viewer, tier, { q, error, status: 400 });
    if (userId === null) return refuse('Choose a user from the search results.');
    if (!tier.sbt_is_active) return refuse('This tier is inactive: activate it before adding members.');
    const target = await db.selectFrom('usr_users').select(['usr_user_id', 'usr_permission']).where('usr_user_id', '=', userId).executeTakeFirst();
    if (target && !mayActOn(viewer.user, target)) {
      return render(reply, viewer, tier, { q, error: 'You cannot change the tier of a user with more permission than yours.', status: 403 });
    }
    try {
      await services.tiers.membership.assignManually(userId, tier.sbt_subscription_tier_id, viewer.user.usr_user_id);
    } catch (e) {
      if (!(e instanceof TierInputError)) throw e;
      // The service has the last word (the tier may have changed since it was read above).
      return refuse(e.fields.user_id ? 'That user does not exist.' : e.message);
    }
    await setFlash(db, viewer.session, { id: 'members-notice', text: 'Member added.' });
    return reply.redirect(`/admin/tiers/${tier.sbt_subscription_tier_id}/members`, 303);
  });

  web.post('/admin/tiers/:id/members/:userId/remove', async (request, reply) => {
    const viewer = await guardPage(request, reply, services, 5);
    if (!viewer) return reply;
    if (!(await checkPostedForm(request, reply, viewer, FORM_NAME))) return reply;
    const tier = await tierFromParams(request);
    if (!tier) return notFound(reply, viewer);
    const rawUser = (request.params as { userId: string }).userId;
    const userId = /^\d{1,9}$/.test(rawUser) ? Number(rawUser) : null;
    // Only a member of this tier is removed here: the user row is locked (as the membership service
    // does) before membership is checked, so a concurrent change cannot slip in between.
    const outcome: 'removed' | 'not_member' | 'forbidden' =
      userId === null
        ? 'not_member'
        : await db.transaction().execute(async (trx) => {
            const user = await trx.selectFrom('usr_users').select(['usr_user_id', 'usr_permission']).where('usr_user_id', '=', userId).forUpdate().executeTakeFirst();
            if (!user) return 'not_member';
            if (!mayActOn(viewer.user, user)) return 'forbidden';
            const member = await trx
              .selectFrom('grm_group_members')
              .select('grm_group_member_id')
              .where('grm_foreign_key_id', '=', userId)
              .where('grm_sbt_subscription_tier_id', '=', tier.sbt_subscription_tier_id)
              .executeTakeFirst();
            if (!member) return 'not_member';
            await services.tiers.membership.within(trx).assignManually(userId, null, viewer.user.usr_user_id);
            return 'removed';
          });
    if (outcome === 'forbidden') return render(reply, viewer, tier, { membersError: 'You cannot change the tier of a user with more permission than yours.', status: 403 });
    if (outcome === 'not_member') return render(reply, viewer, tier, { membersError: 'That user is not a member of this tier.', status: 400 });
    await setFlash(db, viewer.session, { id: 'members-notice', text: 'Member removed.' });
    return reply.redirect(`/admin/tiers/${tier.sbt_subscription_tier_id}/members`, 303);
  });
}
