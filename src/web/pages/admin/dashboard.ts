import type { FastifyInstance } from 'fastify';
import { formatMoney } from '../../../lib/money.js';
import { formatTimestamp } from '../../../lib/time.js';
import type { Services } from '../../../services.js';
import { guardPage, sendViewerPage } from '../../forms.js';
import { html } from '../../html.js';
import { barChart } from '../../svg-chart.js';
import { SOURCE_LABELS } from '../subscription.js';
import { CHART_DAYS, dashboardFigures, type DashboardFigures } from './dashboard-figures.js';
import { adminNav } from './nav.js';
import { storeClosedReason } from '../../../settings/store-active.js';

const STATUS_WORDS: Record<string, string> = { cancelled: 'ends at period end', expired: 'ended', refunded: 'refunded', replaced: 'replaced', active: 'reactivated' };
const shortDay = (day: string) => new Date(`${day}T00:00:00Z`).toLocaleDateString('en', { month: 'short', day: 'numeric', timeZone: 'UTC' });

function render(f: DashboardFigures, storeClosed: string | null) {
  const totalActive = f.subscriptions.reduce((n, s) => n + s.active, 0);
  const totalEnding = f.subscriptions.reduce((n, s) => n + s.ending, 0);
  return html`${adminNav()}
${storeClosed === null ? '' : html`<p class="help" id="store-closed">The store is closed (${storeClosed}): nothing is sold and no billing source changes tiers. <a href="/admin/settings#billing-sources">Store and billing sources</a></p>`}
<div class="grid" id="figures">
  <div class="card"><div class="help">Monthly recurring revenue</div><div class="figure"><a id="mrr" href="/admin/members?status=active">${f.mrr.length === 0 ? formatMoney(0, 'usd') : f.mrr.map((m, i) => html`${i > 0 ? ' · ' : ''}<span data-currency="${m.currency}">${formatMoney(m.minor, m.currency)}</span>`)}</a></div>
    <div class="help">Renewing subscriptions, each price as a monthly amount (a year’s is divided by 12).${f.withoutPeriod > 0 ? html` <span id="mrr-without-period">${f.withoutPeriod} without a billing period left out.</span>` : ''}</div></div>
  <div class="card"><div class="help">Active subscriptions</div><div class="figure"><a id="active-subscriptions" href="/admin/members?status=active">${totalActive}</a></div><div class="help"><a id="ending-subscriptions" href="/admin/members?status=ending">${totalEnding} more</a> end at their period end.</div></div>
  <div class="card"><div class="help">Orders</div><div class="figure"><a id="order-count" href="/admin/orders">${f.orders.total}</a></div><div class="help"><a id="failed-orders" href="/admin/orders?status=failed">${f.orders.failed} failed</a> · <a id="pending-orders" href="/admin/orders?status=pending">${f.orders.pending} pending</a></div></div>
  <div class="card"><div class="help">Users</div><div class="figure"><a id="user-count" href="/admin/members">${f.users}</a></div><div class="help"><a id="users-without-tier" href="/admin/members?tier=none">${f.withoutTier} in no tier</a>.</div></div>
</div>
<div class="card">
  <h2>Sign-ups and cancellations, last ${CHART_DAYS} days</h2>
  ${barChart({
    id: 'activity-chart',
    title: `Sign-ups and cancellations per day, last ${CHART_DAYS} days (UTC)`,
    description: `${f.signupsPerDay.reduce((a, b) => a + b, 0)} sign-ups and ${f.cancellationsPerDay.reduce((a, b) => a + b, 0)} cancellations from ${f.days[0]} to ${f.days[f.days.length - 1]}.`,
    labels: f.days,
    labelEvery: 7,
    formatLabel: shortDay,
    series: [
      { name: 'signups', label: 'Sign-ups', color: '#2454d6', values: f.signupsPerDay },
      { name: 'cancellations', label: 'Cancellations', color: '#d97706', values: f.cancellationsPerDay },
    ],
  })}
</div>
<div class="grid">
  <div class="card"><h2>Members per tier</h2>
  ${f.tiers.length === 0
    ? html`<p>No tiers yet. <a href="/admin/tiers/new">Create one</a>.</p>`
    : html`<table id="tier-members"><thead><tr><th>Tier</th><th>Level</th><th>Members</th></tr></thead><tbody>
${f.tiers.map((t) => html`<tr data-tier="${t.name}"><td><a href="/admin/tiers/${t.id}/members">${t.displayName}</a> <code class="ident">${t.name}</code>${t.active ? '' : html` <span class="help">(inactive)</span>`}</td><td>${t.level}</td><td class="count"><a href="/admin/members?tier=${t.id}">${t.members}</a></td></tr>`)}
<tr data-tier=""><td>No tier</td><td></td><td class="count"><a href="/admin/members?tier=none">${f.withoutTier}</a></td></tr>
</tbody></table>`}
  </div>
  <div class="card"><h2>Active subscriptions by source</h2>
  <table id="subscriptions-by-source"><thead><tr><th>Source</th><th>Renewing</th><th>Ending</th></tr></thead><tbody>
${f.subscriptions.map((s) => html`<tr data-source="${s.source}"><td>${SOURCE_LABELS[s.source]}</td><td class="active"><a href="/admin/members?source=${s.source}&amp;status=active">${s.active}</a></td><td class="ending"><a href="/admin/members?source=${s.source}&amp;status=ending">${s.ending}</a></td></tr>`)}
</tbody></table>
  <p class="help">Ending: cancelled, still paid up to the end of the period.</p></div>
</div>
<div class="grid">
  <div class="card" style="overflow-x:auto"><h2>Recent sign-ups</h2>
  ${f.signups.length === 0
    ? html`<p>No one has signed up yet.</p>`
    : html`<table id="recent-signups"><tbody>${f.signups.map((u) => html`<tr data-user="${u.userId}"><td class="email"><a href="/admin/members/${u.userId}">${u.email}</a>${u.name ? html`<br><span class="help">${u.name}</span>` : ''}</td><td class="when">${formatTimestamp(u.time)}</td></tr>`)}</tbody></table>`}
  </div>
  <div class="card" style="overflow-x:auto"><h2>Recent cancellations</h2>
  ${f.cancellations.length === 0
    ? html`<p id="no-cancellations">No cancellations.</p>`
    : html`<table id="recent-cancellations"><tbody>${f.cancellations.map(
        (c) => html`<tr data-item="${c.itemId}"><td class="email">${c.userId !== null && c.email ? html`<a href="/admin/members/${c.userId}">${c.email}</a>` : (c.email ?? '—')}<br><span class="help">${c.product} · ${c.source ? SOURCE_LABELS[c.source] : 'no source'}${c.status && STATUS_WORDS[c.status] ? ` · ${STATUS_WORDS[c.status]}` : ''}</span></td><td class="when">${formatTimestamp(c.time)}</td></tr>`,
      )}</tbody></table>`}
  </div>
</div>`;
}

/** Admin → Dashboard: members per tier, subscriptions by source, MRR, recent sign-ups and cancellations, a 30-day chart. */
export function dashboardPage(web: FastifyInstance, services: Services): void {
  web.get('/admin', async (request, reply) => {
    const viewer = await guardPage(request, reply, services, 5);
    if (!viewer) return reply;
    const figures = await dashboardFigures(services.db, services.clock.now());
    return sendViewerPage(reply, viewer, 'Dashboard', render(figures, storeClosedReason(services.settings)), 200, { wide: true });
  });
}
