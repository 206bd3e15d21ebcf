import type { FastifyInstance } from 'fastify';
import { formatTimestamp } from '../../../lib/time.js';
import type { Services } from '../../../services.js';
import { listTiers } from '../../../tiers/tiers.js';
import { fieldBlock, guardPage, sendViewerPage } from '../../forms.js';
import { html } from '../../html.js';
import { SOURCE_LABELS } from '../subscription.js';
import { listHref, pager, readListQuery, selectInput } from './list-query.js';
import { MEMBER_SOURCES, MEMBER_STATUS_LABELS, MEMBER_STATUSES, searchMembers, type MemberFilter, type MemberSource, type MemberStatus } from './member-search.js';
import { adminNav } from './nav.js';

const BASE = '/admin/members';
const FILTERS = ['q', 'tier', 'source', 'status'] as const;
const MAX_QUERY = 100;

export const ASSIGNMENT_LABELS: Record<string, string> = { purchase: 'purchase', manual: 'manual', other: 'other' };
export const MEMBER_SOURCE_LABELS: Record<MemberSource, string> = { ...SOURCE_LABELS, manual: 'Manual (tier assigned by staff or import)' };
export const SUBSCRIPTION_STATUS_WORDS: Record<string, string> = {
  active: 'active',
  in_grace: 'billing issue (grace)',
  on_hold: 'billing issue (on hold)',
  paused: 'paused',
  cancelled: 'cancelled, ending',
  expired: 'expired',
  refunded: 'refunded',
  replaced: 'replaced',
};

/**
 * Admin → Members: every member, searched by part of their name or email and filtered by tier (or no
 * tier), billing source and billing status (see member-search.ts for what each status means), 25 a page
 * in a stable order. The filters live in the query string, so every link (paging, the dashboard's
 * figures) keeps them. A bad value is named next to its field with a 400; nothing is searched then.
 */
export function membersListPage(web: FastifyInstance, services: Services): void {
  const { db } = services;
  web.get(BASE, async (request, reply) => {
    const viewer = await guardPage(request, reply, services, 5);
    if (!viewer) return reply;
    const { values, errors, page } = readListQuery(request.query, FILTERS);
    const tiers = await listTiers(db, {});
    const q = values.q!;
    if (q.length > MAX_QUERY) errors.q = `Search with at most ${MAX_QUERY} characters.`;
    // eslint-disable-next-line no-control-regex
    else if (/[\u0000-\u001f\u007f]/.test(q)) errors.q = 'The search cannot contain control characters.';
    let tier: MemberFilter['tier'] = null;
    if (values.tier === 'none') tier = 'none';
    else if (values.tier !== '' && !errors.tier) {
      const id = /^\d{1,9}$/.test(values.tier!) ? Number(values.tier) : null;
      if (id === null || !tiers.some((t) => t.sbt_subscription_tier_id === id)) errors.tier = 'There is no such tier.';
      else tier = id;
    }
    if (values.source !== '' && !errors.source && !MEMBER_SOURCES.includes(values.source as MemberSource)) errors.source = `Expected one of ${MEMBER_SOURCES.join(', ')}.`;
    if (values.status !== '' && !errors.status && !MEMBER_STATUSES.includes(values.status as MemberStatus)) errors.status = `Expected one of ${MEMBER_STATUSES.join(', ')}.`;
    const bad = Object.keys(errors).length > 0;
    const filter: MemberFilter = {
      q,
      tier,
      source: values.source ? (values.source as MemberSource) : null,
      status: values.status ? (values.status as MemberStatus) : null,
      page,
    };
    const result = bad ? { total: 0, rows: [] } : await searchMembers(db, filter);
    const kept = Object.fromEntries(FILTERS.map((k) => [k, errors[k] ? '' : values[k]!]));
    const filtering = FILTERS.some((k) => kept[k] !== '');

    const body = html`${adminNav()}
<div class="card">
  <h2>Find members</h2>
  ${bad ? html`<p class="error" id="filter-error" role="alert">The search could not be run: correct the marked fields.</p>` : ''}
  <form method="get" action="${BASE}" id="member-filters">
    ${fieldBlock('q', 'Name or email contains', html`<input id="q" name="q" type="text" value="${q}" autocomplete="off" maxlength="${MAX_QUERY + 50}">`, errors.q)}
    <div class="grid" style="margin:0">
      ${fieldBlock('tier', 'Tier', selectInput('tier', [['', 'Any tier'], ['none', 'No tier'], ...tiers.map((t) => [String(t.sbt_subscription_tier_id), `${t.sbt_display_name}${t.sbt_is_active ? '' : ' (inactive)'}`] as const)], values.tier!), errors.tier)}
      ${fieldBlock('source', 'Billing source', selectInput('source', [['', 'Any source'], ...MEMBER_SOURCES.map((s) => [s, MEMBER_SOURCE_LABELS[s]] as const)], values.source!), errors.source)}
      ${fieldBlock('status', 'Billing status', selectInput('status', [['', 'Any status'], ...MEMBER_STATUSES.map((s) => [s, MEMBER_STATUS_LABELS[s]] as const)], values.status!), errors.status)}
    </div>
    ${errors.page ? html`<p class="field-error" id="page-error" role="alert">${errors.page}</p>` : ''}
    <button class="primary" type="submit">Search</button>
    ${filtering ? html` <a href="${BASE}" id="clear-filters">Clear</a>` : ''}
  </form>
  <p class="help">Billing source and status look at the member’s subscriptions: a member matches when one of them is billed through that source and in that status. “Manual” finds tiers assigned by staff or an import. <a href="/admin/members/import">Import or export members</a>.</p>
</div>
<div class="card">
  <h2>Members <span class="help" id="member-total">(${result.total})</span></h2>
  ${result.rows.length === 0
    ? html`<p id="no-members">${bad ? 'Nothing searched.' : filtering ? 'No member matches.' : 'No members yet.'}</p>`
    : html`<table id="members" class="stack"><thead><tr><th>Member</th><th>Tier</th><th>Subscriptions</th><th>Joined</th></tr></thead><tbody>
${result.rows.map(
  (m) => html`<tr data-user="${m.userId}" data-email="${m.email}"><td style="overflow-wrap:anywhere"><a href="/admin/members/${m.userId}">${m.email}</a>${m.name ? html`<br><span class="help">${m.name}</span>` : ''}${m.permission >= 5 ? html` <span class="help">(${m.permission >= 10 ? 'superadmin' : 'staff'})</span>` : ''}</td>
<td class="tier" data-label="Tier">${m.tier ? html`${m.tier.name} <span class="help">(${ASSIGNMENT_LABELS[m.tier.method] ?? m.tier.method})</span>` : 'none'}</td>
<td class="subscriptions" data-label="Subscriptions">${m.subscriptions.length === 0 ? '—' : m.subscriptions.map((s, i) => html`${i > 0 ? html`<br>` : ''}<span data-status="${s.status}">${s.source ? SOURCE_LABELS[s.source] : 'no source'} · ${SUBSCRIPTION_STATUS_WORDS[s.status] ?? s.status}</span>`)}</td>
<td class="time" data-label="Joined">${formatTimestamp(m.created)}</td></tr>`,
)}
</tbody></table>`}
  ${bad ? '' : pager(BASE, kept, page, result.total, 'Members')}
  ${!bad && result.rows.length === 0 && page > 1 && result.total > 0 ? html`<p><a href="${listHref(BASE, kept)}" id="first-page">Back to the first page</a></p>` : ''}
</div>`;
    return sendViewerPage(reply, viewer, 'Members', body, bad ? 400 : 200, { wide: true });
  });
}
