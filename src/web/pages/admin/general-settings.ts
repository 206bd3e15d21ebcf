import type { FastifyInstance, FastifyReply } from 'fastify';
import type { SettingDefinition } from '../../../settings/definitions.js';
import { BILLING_SOURCE_SPECS, billingSourceStatuses, type BillingSourceSpec } from '../../../settings/billing-sources.js';
import { settingDefinition, validateSettingValue } from '../../../settings/registry.js';
import { storeClosedReason } from '../../../settings/store-active.js';
import type { Services } from '../../../services.js';
import { bodyChecked, bodyField, checkboxInput, checkPostedForm, fieldBlock, guardPage, hasBodyField, sendViewerPage, tokenInput, type Viewer } from '../../forms.js';
import { flashNotice, setFlash, takeFlash, type Flash } from '../../flash.js';
import { html, type SafeHtml } from '../../html.js';
import { adminNav } from './nav.js';
import { parsePosted, settingErrorText, settingsNav } from './setting-fields.js';

/** usr_permission of a superadmin: only they see and change the payment providers' settings. */
const SUPERADMIN = 10;
const TITLE = 'Settings';
const GENERAL_FORM = 'general-settings';
const providerForm = (source: string) => `provider-settings-${source}`;

/** The general settings any staff member changes here: the site's name and sender, and the Drive switch. */
const GENERAL = ['site_name', 'mail_from_address', 'drive_active'] as const;

const LABELS: Record<string, string> = {
  site_name: 'Site name',
  mail_from_address: 'Sender address (From of all mail)',
  drive_active: 'Drive for members (drive_active)',
  card_processor_api_key: 'API key (secret key, sk_…)',
  card_processor_webhook_secret: 'Webhook signing secret (whsec_…)',
  card_processor_api_base: 'API base URL (empty: the provider’s own)',
  wallet_provider_webhook_id: 'Webhook id',
  wallet_provider_client_id: 'Client id',
  wallet_provider_client_secret: 'Client secret',
  wallet_provider_api_base: 'API base URL',
  wallet_provider_cert_hosts: 'Trusted webhook certificate hosts',
  ios_store_bundle_id: 'Bundle id',
  ios_store_environment: 'Environment',
  ios_store_app_apple_id: 'App Apple ID',
  ios_store_root_certificates: 'Apple root certificates (PEM)',
  ios_store_api_key_id: 'App Store Server API key id',
  ios_store_api_issuer_id: 'App Store Server API issuer id',
  ios_store_api_private_key: 'App Store Server API private key (PEM)',
  ios_store_api_base: 'App Store Server API base URL',
  android_store_package_name: 'Package name',
  android_store_push_audience: 'Push audience',
  android_store_push_email: 'Push service account email',
  android_store_service_account: 'Service account JSON',
  android_store_api_base: 'Play Developer API base URL',
  android_store_oidc_certs_url: 'Push token certificates URL',
  android_store_token_url: 'OAuth token URL',
};

const HELP: Record<string, string> = {
  site_name: 'Shown in every page title, the header, mail subjects, and as the name mail is sent under.',
  mail_from_address: 'Every mail the site sends (sign-in links, member emails, receipts) comes from this address.',
  drive_active: 'Members’ Drive (files, folders, sharing). Off, the Drive page and all drive_* actions are unavailable, and the Drive features of tiers have no effect.',
};

/** Settings whose value runs over several lines (PEM, JSON): a textarea. */
const MULTILINE = new Set(['ios_store_root_certificates', 'ios_store_api_private_key', 'android_store_service_account']);

function generalControl(def: SettingDefinition, value: unknown): SafeHtml {
  if (def.type === 'boolean') return checkboxInput(def.name, value === true);
  const type = def.name === 'mail_from_address' ? 'email' : 'text';
  return html`<input id="${def.name}" name="${def.name}" type="${type}" value="${String(value ?? '')}">`;
}

/** A provider setting's control. A secret is never rendered: its field is always empty, with a "clear" box. */
function providerControl(def: SettingDefinition, value: unknown): SafeHtml {
  const id = def.name;
  if (def.type === 'enum') return html`<select id="${id}" name="${id}">${def.options.map((o) => html`<option value="${o}" ${value === o ? html`selected` : ''}>${o}</option>`)}</select>`;
  if (def.secret) {
    const isSet = value !== '';
    const state = html`<span class="secret-state ${isSet ? 'set' : 'unset'}" id="${id}-state">${isSet ? 'set' : 'not set'}</span>`;
    const field = MULTILINE.has(id)
      ? html`<textarea id="${id}" name="${id}" rows="3" autocomplete="off" spellcheck="false" placeholder="${isSet ? 'Set: leave empty to keep it' : 'Not set'}"></textarea>`
      : html`<input id="${id}" name="${id}" type="password" autocomplete="new-password" value="" placeholder="${isSet ? 'Set: leave empty to keep it' : 'Not set'}">`;
    return html`<div class="help">Currently: ${state}</div>${field}${isSet ? html`<label class="inline-check" style="display:flex;gap:.4rem;align-items:center;font-weight:400;margin-top:.25rem"><input type="checkbox" name="clear_${id}" id="clear_${id}" value="true"> Clear it</label>` : ''}`;
  }
  if (MULTILINE.has(id)) return html`<textarea id="${id}" name="${id}" rows="4" spellcheck="false">${String(value ?? '')}</textarea>`;
  return html`<input id="${id}" name="${id}" type="text" value="${String(value ?? '')}">`;
}

export function generalSettingsPage(web: FastifyInstance, services: Services): void {
  const { settings } = services;

  function storeStatus(): SafeHtml {
    const reason = storeClosedReason(settings);
    const statuses = billingSourceStatuses(settings);
    return html`<div class="card" id="billing-sources"><h2>Store and billing sources</h2>
${reason === null
  ? html`<p class="notice" id="store-state">The store is open: products and subscriptions are on sale.</p>`
  : html`<p class="notice warning" id="store-state">The store is closed: ${reason}.</p>`}
<p class="help">The store opens when both store switches are on (<a href="/admin/settings/subscriptions#store-switches">Store and subscriptions</a>) and at least one billing source below is configured. Every billing source is configured by these settings; none is read from the environment.</p>
<table class="stack" id="billing-source-status"><thead><tr><th>Billing source</th><th>Status</th><th>Missing</th></tr></thead><tbody>
${statuses.map(
  (s) => html`<tr data-source="${s.source}" data-configured="${String(s.configured)}"><td data-label="Source">${s.label}</td><td data-label="Status" class="status">${s.configured ? 'Configured' : 'Not configured'}</td><td data-label="Missing" class="missing">${s.missing.length === 0 ? '—' : html`<ul>${s.missing.map((m) => html`<li>${m}</li>`)}</ul>`}</td></tr>`,
)}
</tbody></table></div>`;
  }

  function providerSection(viewer: Viewer, spec: BillingSourceSpec, values: Record<string, unknown>, errors: Record<string, string>): SafeHtml {
    return html`<form method="post" action="/admin/settings/providers" class="provider" id="provider-${spec.source}" novalidate style="border-top:1px solid #e5e8ec;margin-top:1rem;padding-top:.25rem">
  ${tokenInput(viewer, providerForm(spec.source))}
  <input type="hidden" name="source" value="${spec.source}">
  <h3>${spec.label}</h3>
  ${spec.settings.map((name) => {
    const def = settingDefinition(name)!;
    return fieldBlock(name, html`${LABELS[name] ?? name} <code class="ident">${name}</code>`, providerControl(def, values[name] ?? settings.get(name)), errors[name], def.description);
  })}
  <button class="primary" type="submit">Save ${spec.label}</button>
</form>`;
  }

  function render(viewer: Viewer, o: { general?: Record<string, unknown>; errors?: Record<string, string>; provider?: { source: string; values: Record<string, unknown> }; flash?: Flash | null }) {
    const errors = o.errors ?? {};
    const general = o.general ?? Object.fromEntries(GENERAL.map((n) => [n, settings.get(n)]));
    const superadmin = (viewer.user?.usr_permission ?? 0) >= SUPERADMIN;
    return html`${adminNav()}
${settingsNav('general')}
${flashNotice(o.flash ?? null)}
${Object.keys(errors).length ? html`<p class="error" role="alert" id="settings-errors">Nothing was saved: fix the fields marked below.</p>` : ''}
<div class="card"><form method="post" action="/admin/settings" novalidate id="general-form">
  ${tokenInput(viewer, GENERAL_FORM)}
  <h2 id="site">Site</h2>
  ${fieldBlock('site_name', LABELS.site_name!, generalControl(settingDefinition('site_name')!, general.site_name), errors.site_name, HELP.site_name)}
  ${fieldBlock('mail_from_address', LABELS.mail_from_address!, generalControl(settingDefinition('mail_from_address')!, general.mail_from_address), errors.mail_from_address, HELP.mail_from_address)}
  <h2 id="drive">Drive</h2>
  ${settings.bool('drive_active') ? html`<p class="notice" id="drive-state">Drive is on.</p>` : html`<p class="help" id="drive-state">Drive is off site-wide.</p>`}
  ${fieldBlock('drive_active', LABELS.drive_active!, generalControl(settingDefinition('drive_active')!, general.drive_active), errors.drive_active, HELP.drive_active)}
  <button class="primary" type="submit" id="save-general">Save settings</button>
</form></div>
${storeStatus()}
<div class="card" id="providers"><h2>Payment provider settings</h2>
${superadmin
  ? html`<p class="help">Secrets are write-only: they show only as set or not set. Leave a secret’s field empty to keep it; tick “Clear it” to remove it.</p>
${BILLING_SOURCE_SPECS.map((spec) => providerSection(viewer, spec, o.provider?.source === spec.source ? o.provider.values : {}, o.provider?.source === spec.source ? errors : {}))}`
  : html`<p class="help" id="providers-superadmin-only">Only a superadmin can see and change the payment providers’ settings.</p>`}
</div>`;
  }

  const send = (reply: FastifyReply, viewer: Viewer, body: SafeHtml, status = 200) => sendViewerPage(reply, viewer, TITLE, body, status);

  web.get('/admin/settings', async (request, reply) => {
    const viewer = await guardPage(request, reply, services, 5);
    if (!viewer) return reply;
    return send(reply, viewer, render(viewer, { flash: await takeFlash(services.db, viewer.session) }));
  });

  web.post('/admin/settings', async (request, reply) => {
    const viewer = await guardPage(request, reply, services, 5);
    if (!viewer) return reply;
    if (!(await checkPostedForm(request, reply, viewer, GENERAL_FORM))) return reply;
    const values: Record<string, unknown> = Object.fromEntries(GENERAL.map((n) => [n, settings.get(n)]));
    const errors: Record<string, string> = {};
    const accepted: Array<[string, unknown]> = [];
    for (const name of GENERAL) {
      if (!hasBodyField(request, name)) continue;
      const def = settingDefinition(name)!;
      const raw = def.type === 'boolean' ? String(bodyChecked(request, name)) : bodyField(request, name);
      const parsed = parsePosted(def, raw);
      values[name] = parsed;
      try {
        accepted.push([name, validateSettingValue(def, parsed)]);
      } catch (e) {
        errors[name] = settingErrorText(name, e);
      }
    }
    if (Object.keys(errors).length > 0) return send(reply, viewer, render(viewer, { general: values, errors }), 400);
    await services.db.transaction().execute(async (trx) => {
      for (const [name, value] of accepted) await settings.set(name, value, trx);
    });
    await setFlash(services.db, viewer.session, { id: 'settings-saved', text: 'Settings saved.' });
    return reply.redirect('/admin/settings', 303);
  });

  // One billing source's settings at a time. Superadmins only: staff get 403 (they see the status only).
  web.post('/admin/settings/providers', async (request, reply) => {
    const viewer = await guardPage(request, reply, services, SUPERADMIN);
    if (!viewer) return reply;
    const spec = BILLING_SOURCE_SPECS.find((s) => s.source === bodyField(request, 'source'));
    if (!spec) return send(reply, viewer, html`<div class="card"><p class="error">Unknown billing source.</p></div>`, 400);
    if (!(await checkPostedForm(request, reply, viewer, providerForm(spec.source)))) return reply;
    const values: Record<string, unknown> = {};
    const errors: Record<string, string> = {};
    const accepted: Array<[string, unknown]> = [];
    for (const name of spec.settings) {
      const def = settingDefinition(name)!;
      if (def.secret) {
        // Write-only: an empty field keeps the stored secret; "Clear it" removes it. Never echoed back.
        const posted = bodyField(request, name).trim();
        if (posted !== '') {
          try {
            accepted.push([name, validateSettingValue(def, posted)]);
          } catch (e) {
            errors[name] = settingErrorText(name, e);
          }
        } else if (bodyChecked(request, `clear_${name}`)) accepted.push([name, '']);
        continue;
      }
      if (!hasBodyField(request, name)) continue;
      const parsed = parsePosted(def, bodyField(request, name));
      values[name] = parsed;
      try {
        accepted.push([name, validateSettingValue(def, parsed)]);
      } catch (e) {
        errors[name] = settingErrorText(name, e);
      }
    }
    if (Object.keys(errors).length > 0) return send(reply, viewer, render(viewer, { errors, provider: { source: spec.source, values } }), 400);
    await services.db.transaction().execute(async (trx) => {
      for (const [name, value] of accepted) await settings.set(name, value, trx);
    });
    const status = billingSourceStatuses(settings).find((s) => s.source === spec.source)!;
    await setFlash(services.db, viewer.session, {
      id: 'settings-saved',
      text: status.configured ? `${spec.label} settings saved: configured.` : `${spec.label} settings saved. Still missing: ${status.missing.join('; ')}.`,
    });
    return reply.redirect(`/admin/settings#provider-${spec.source}`, 303);
  });
}
