import type { FastifyInstance } from 'fastify';
import type { SettingDefinition } from '../../../settings/definitions.js';
import { settingDefinition, validateSettingValue } from '../../../settings/registry.js';
import type { Services } from '../../../services.js';
import { storeSwitchesOn } from '../../../settings/billing-sources.js';
import { bodyChecked, bodyField, checkboxInput, checkPostedForm, fieldBlock, guardPage, hasBodyField, sendViewerPage, tokenInput, type Viewer } from '../../forms.js';
import { flashNotice, setFlash, takeFlash, type Flash } from '../../flash.js';
import { html } from '../../html.js';
import { adminNav } from './nav.js';
import { parsePosted, settingErrorText, settingsNav } from './setting-fields.js';

/** The screen's sections, in order: the store switches, the six subscription behaviour settings, the gate settings. */
const SECTIONS = [
  {
    id: 'store-switches',
    title: 'Store',
    help: 'The store is open only while both switches are on and at least one billing source is configured. Closed, nothing is sold and no billing code runs: tiers, levels, manual membership, features and content gating keep working, and payment-provider callbacks are verified and logged but change no one’s tier.',
    names: ['products_active', 'subscriptions_active'],
  },
  {
    id: 'subscription-behaviour',
    title: 'Subscriptions',
    help: 'What members may do with their own subscription.',
    names: [
      'subscription_downgrades_enabled',
      'subscription_downgrade_timing',
      'subscription_cancellation_enabled',
      'subscription_cancellation_timing',
      'subscription_reactivation_enabled',
      'subscription_cancellation_prorate',
    ],
  },
  { id: 'gating', title: 'Content gating', help: 'What a visitor below an item’s tier level sees.', names: ['tier_upgrade_url', 'tier_gate_preview_length', 'tier_gate_hide_from_listings'] },
] as const;

export const SUBSCRIPTION_SCREEN_SETTINGS: readonly string[] = SECTIONS.flatMap((s) => s.names);

const HELP: Record<string, string> = {
  products_active: 'With the other switch on: checkout is open, and the cart’s Check out and the pricing page’s Choose buttons are shown.',
  subscriptions_active: 'With the other switch on: purchases and renewals from the four billing sources grant tiers, expiry, cancellations and refunds remove them, and members can change or cancel their subscription.',
};

const LABELS: Record<string, string> = {
  products_active: 'Sell products (products_active)',
  subscriptions_active: 'Sell subscriptions (subscriptions_active)',
  subscription_downgrades_enabled: 'Members may downgrade',
  subscription_downgrade_timing: 'Downgrades take effect',
  subscription_cancellation_enabled: 'Members may cancel',
  subscription_cancellation_timing: 'Cancellations take effect',
  subscription_reactivation_enabled: 'Members may reactivate a cancelled subscription',
  subscription_cancellation_prorate: 'Refund the unused period on immediate cancellation',
  tier_upgrade_url: 'Upgrade URL',
  tier_gate_preview_length: 'Preview length (characters; 0 shows no preview)',
  tier_gate_hide_from_listings: 'Hide gated items from listings of members without the tier',
};
const TIMING: Record<string, string> = { immediate: 'Immediately', end_of_period: 'At the end of the paid period' };

function control(def: SettingDefinition, value: unknown) {
  const id = def.name;
  switch (def.type) {
    case 'boolean':
      return checkboxInput(id, value === true);
    case 'enum':
      return html`<select id="${id}" name="${id}">${def.options.map((o) => html`<option value="${o}" ${value === o ? html`selected` : ''}>${TIMING[o] ?? o}</option>`)}</select>`;
    case 'integer':
      return html`<input id="${id}" name="${id}" type="number" step="1" ${def.min !== undefined ? html`min="${def.min}"` : ''} ${def.max !== undefined && def.max < Number.MAX_SAFE_INTEGER ? html`max="${def.max}"` : ''} value="${String(value)}">`;
    default:
      return html`<input id="${id}" name="${id}" type="text" value="${String(value ?? '')}">`;
  }
}


export function subscriptionSettingsPage(web: FastifyInstance, services: Services): void {
  const { settings } = services;

  const storeState = () =>
    services.store.active()
      ? html`<p class="notice" id="store-state">The store is open: products and subscriptions are on sale.</p>`
      : storeSwitchesOn(settings)
        ? html`<p class="notice warning" id="store-state">The store is closed: both switches are on, but no billing source is configured. <a href="/admin/settings#billing-sources">See what is missing</a>.</p>`
        : html`<p class="help" id="store-state">The store is closed: nothing is sold until both switches are on and a billing source is configured (<a href="/admin/settings#billing-sources">billing sources</a>).</p>`;

  const render = (viewer: Viewer, values: Record<string, unknown>, errors: Record<string, string>, flash: Flash | null) =>
    html`${adminNav()}
${settingsNav('subscriptions')}
${flashNotice(flash)}
${Object.keys(errors).length ? html`<p class="error" role="alert">Nothing was saved: fix the fields marked below.</p>` : ''}
<div class="card"><form method="post" action="/admin/settings/subscriptions" novalidate>
  ${tokenInput(viewer, 'subscription-settings')}
  ${SECTIONS.map(
    (section) => html`<h2 id="${section.id}">${section.title}</h2><p class="help">${section.help}</p>
  ${section.id === 'store-switches' ? storeState() : ''}
  ${section.names.map((name) => {
    const def = settingDefinition(name)!;
    return fieldBlock(name, LABELS[name] ?? name, control(def, values[name]), errors[name], HELP[name] ?? def.description);
  })}`,
  )}
  <button class="primary" type="submit">Save settings</button>
</form></div>`;

  const current = () => Object.fromEntries(SUBSCRIPTION_SCREEN_SETTINGS.map((n) => [n, settings.get(n)]));

  web.get('/admin/settings/subscriptions', async (request, reply) => {
    const viewer = await guardPage(request, reply, services, 5);
    if (!viewer) return reply;
    return sendViewerPage(reply, viewer, 'Store and subscription settings', render(viewer, current(), {}, await takeFlash(services.db, viewer.session)));
  });

  web.post('/admin/settings/subscriptions', async (request, reply) => {
    const viewer = await guardPage(request, reply, services, 5);
    if (!viewer) return reply;
    if (!(await checkPostedForm(request, reply, viewer, 'subscription-settings'))) return reply;
    const values: Record<string, unknown> = current();
    const errors: Record<string, string> = {};
    const accepted: Array<[string, unknown]> = [];
    for (const name of SUBSCRIPTION_SCREEN_SETTINGS) {
      if (!hasBodyField(request, name)) continue;
      const def = settingDefinition(name)!;
      // A checked box posts its hidden 'false' and then 'true': read every value, not just a single one.
      const raw = def.type === 'boolean' ? String(bodyChecked(request, name)) : bodyField(request, name);
      const parsed = parsePosted(def, raw);
      values[name] = def.type === 'integer' ? raw : parsed;
      try {
        accepted.push([name, validateSettingValue(def, parsed)]);
      } catch (e) {
        errors[name] = settingErrorText(name, e);
      }
    }
    if (Object.keys(errors).length > 0) {
      return sendViewerPage(reply, viewer, 'Store and subscription settings', render(viewer, values, errors, null), 400);
    }
    // Every value was checked first, so the writes cannot fail half-way on bad input.
    await services.db.transaction().execute(async (trx) => {
      for (const [name, value] of accepted) await settings.set(name, value, trx);
    });
    // POST-redirect-GET: the notice travels in the session, so reloading the page does not post again or show it twice.
    await setFlash(services.db, viewer.session, { id: 'settings-saved', text: 'Settings saved.' });
    return reply.redirect('/admin/settings/subscriptions', 303);
  });
}
