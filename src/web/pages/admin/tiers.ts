import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { FeatureValue } from '../../../db/types.js';
import { BYTE_UNITS, byteSizeParts, isByteUnit, parseByteSize, type ByteUnit } from '../../../lib/byte-size.js';
import type { Services } from '../../../services.js';
import { TierInputError } from '../../../tiers/errors.js';
import type { FeatureDefinition } from '../../../tiers/feature-registry.js';
import { createTier, updateTier, type Tier } from '../../../tiers/tiers.js';
import { flashNotice, setFlash, takeFlash, type Flash } from '../../flash.js';
import { bodyChecked, bodyField, checkboxInput, checkPostedForm, fieldBlock, guardPage, sendViewerPage, tokenInput, type Viewer } from '../../forms.js';
import { html, type SafeHtml } from '../../html.js';
import { featureInUse, featureLabel, isByteFeature, isDriveFeature, showValue } from '../../feature-display.js';
import { adminNav } from './nav.js';

/** The tier form as typed: every field as posted text, so a refused form shows what was entered. */
interface TierForm {
  sbt_name: string;
  sbt_display_name: string;
  sbt_tier_level: string;
  sbt_description: string;
  sbt_is_active: boolean;
  /** Per declared feature: the text typed (integer, string) or the box's state (boolean); absent = no explicit value. */
  features: Record<string, string | boolean>;
  /** Per byte-size feature: the unit picked beside its number. */
  units: Record<string, ByteUnit>;
}

type Errors = Record<string, string>;

const FORM_NAME = 'tier-edit';
export const featureFieldId = (key: string) => `feature_${key}`;
/** The unit picker beside a byte-size feature's number. */
export const featureUnitId = (key: string) => `feature_${key}_unit`;
const BYTE_SIZE_HELP = 'Pick the unit beside the number: 1 GB = 1,000,000,000 bytes, as the Drive page counts.';
const sentence = (message: string) => message.charAt(0).toUpperCase() + message.slice(1) + (message.endsWith('.') ? '' : '.');
const has = (o: object, key: string) => Object.prototype.hasOwnProperty.call(o, key);

/** A tier's internal name: an identifier, as the tier's group and every API client use it. */
export const TIER_NAME_RE = /^[a-z0-9_]+$/;

function formFromTier(tier: Tier | null, definitions: FeatureDefinition[]): TierForm {
  const stored = (tier?.sbt_features ?? {}) as Record<string, unknown>;
  const features: TierForm['features'] = {};
  const units: TierForm['units'] = {};
  for (const def of definitions) {
    if (!has(stored, def.key)) continue;
    const v = stored[def.key];
    if (def.type === 'boolean') {
      if (typeof v === 'boolean') features[def.key] = v;
    } else if (isByteFeature(def) && typeof v === 'number') {
      const parts = byteSizeParts(v);
      features[def.key] = String(parts.amount);
      units[def.key] = parts.unit;
    } else if (typeof v === (def.type === 'integer' ? 'number' : 'string')) features[def.key] = String(v);
  }
  return {
    sbt_name: tier?.sbt_name ?? '',
    sbt_display_name: tier?.sbt_display_name ?? '',
    sbt_tier_level: tier ? String(tier.sbt_tier_level) : '',
    sbt_description: tier?.sbt_description ?? '',
    sbt_is_active: tier?.sbt_is_active ?? true,
    features,
    units,
  };
}

function formFromRequest(request: FastifyRequest, definitions: FeatureDefinition[]): TierForm {
  const features: TierForm['features'] = {};
  const units: TierForm['units'] = {};
  for (const def of definitions) {
    const id = featureFieldId(def.key);
    // Without a picker in the post (a script, an older form) the number is bytes.
    const unit = bodyField(request, featureUnitId(def.key));
    if (isByteFeature(def)) units[def.key] = isByteUnit(unit) ? unit : 'B';
    if (def.type === 'boolean') features[def.key] = bodyChecked(request, id);
    else if (bodyField(request, id).trim() !== '') features[def.key] = def.type === 'integer' ? bodyField(request, id).trim() : bodyField(request, id);
  }
  return {
    sbt_name: bodyField(request, 'sbt_name').trim(),
    sbt_display_name: bodyField(request, 'sbt_display_name').trim(),
    sbt_tier_level: bodyField(request, 'sbt_tier_level').trim(),
    sbt_description: bodyField(request, 'sbt_description'),
    sbt_is_active: bodyChecked(request, 'sbt_is_active'),
    features,
    units,
  };
}

/**
 * The form's text turned into typed values, with one message per field that cannot be: the page's own
 * parsing (required names, integer text); the registry's check of the features (type, min/max); the
 * tier service has the last word when it writes.
 */
function parseForm(form: TierForm, services: Services): { errors: Errors; features: Record<string, FeatureValue> } {
  const errors: Errors = {};
  if (form.sbt_name === '') errors.sbt_name = 'Enter the tier’s internal name.';
  else if (!TIER_NAME_RE.test(form.sbt_name)) errors.sbt_name = 'Use only lower-case letters, digits and underscores, for example premium_plus.';
  if (form.sbt_display_name === '') errors.sbt_display_name = 'Enter the name members see.';
  if (/^-\d+$/.test(form.sbt_tier_level)) errors.sbt_tier_level = 'The level cannot be negative: use 0 or more (higher is a better tier).';
  else if (!/^\d{1,10}$/.test(form.sbt_tier_level) || Number(form.sbt_tier_level) > 2147483647) errors.sbt_tier_level = 'Enter a whole number of 0 or more (higher is a better tier).';
  const features: Record<string, FeatureValue> = {};
  for (const def of services.tiers.registry.all()) {
    if (!has(form.features, def.key)) continue;
    const v = form.features[def.key]!;
    if (isByteFeature(def)) {
      const size = parseByteSize(String(v), form.units[def.key] ?? 'B');
      if ('error' in size) errors[featureFieldId(def.key)] = size.error;
      else features[def.key] = size.value;
    } else if (def.type === 'integer') {
      if (!/^-?\d{1,16}$/.test(String(v)) || !Number.isSafeInteger(Number(v))) errors[featureFieldId(def.key)] = 'Enter a whole number.';
      else features[def.key] = Number(v);
    } else features[def.key] = v;
  }
  const checked = services.tiers.registry.validateValues(features);
  if (!checked.ok) for (const [key, message] of Object.entries(checked.errors)) errors[featureFieldId(key)] ??= sentence(message);
  return { errors, features };
}

const FORM_FIELDS = new Set(['sbt_name', 'sbt_display_name', 'sbt_tier_level', 'sbt_description', 'sbt_is_active']);

/** The service's refusal, each field's message placed next to that field (anything else above the form). */
function serviceErrors(e: TierInputError): Errors {
  const errors: Errors = {};
  for (const [field, message] of Object.entries(e.fields)) {
    if (field.startsWith('sbt_features.')) errors[featureFieldId(field.slice('sbt_features.'.length))] = sentence(message);
    else if (FORM_FIELDS.has(field)) errors[field] = sentence(message);
    else errors.form = e.message;
  }
  if (Object.keys(errors).length === 0) errors.form = e.message;
  return errors;
}

function featureControl(def: FeatureDefinition, value: string | boolean | undefined, unit: ByteUnit | undefined): SafeHtml {
  const id = featureFieldId(def.key);
  if (def.type === 'boolean') return checkboxInput(id, value === undefined ? def.default === true : value === true);
  if (isByteFeature(def)) {
    // The number in the picked unit; the bounds are bytes, so only a lower bound of 0 or less carries over.
    const picked = unit ?? byteSizeParts(def.default as number).unit;
    const unitId = featureUnitId(def.key);
    return html`<div class="size-input"><input id="${id}" name="${id}" type="number" step="any" ${def.min !== undefined && def.min <= 0 ? html`min="${def.min}"` : ''} placeholder="${String(byteSizeParts(def.default as number).amount)}" value="${value === undefined ? '' : String(value)}"><select id="${unitId}" name="${unitId}" aria-label="Unit for ${featureLabel(def)}">${BYTE_UNITS.map(([name]) => html`<option value="${name}"${name === picked ? html` selected` : ''}>${name}</option>`)}</select></div>`;
  }
  if (def.type === 'integer') {
    return html`<input id="${id}" name="${id}" type="number" step="1" ${def.min !== undefined ? html`min="${def.min}"` : ''} ${def.max !== undefined ? html`max="${def.max}"` : ''} placeholder="${String(def.default)}" value="${value === undefined ? '' : String(value)}">`;
  }
  return html`<input id="${id}" name="${id}" type="text" placeholder="${String(def.default)}" value="${value === undefined ? '' : String(value)}">`;
}

function featureHelp(def: FeatureDefinition): string {
  const bound = (n: number) => showValue(n, def);
  const bounds =
    def.min !== undefined && def.max !== undefined
      ? ` From ${bound(def.min)} to ${bound(def.max)}.`
      : def.min !== undefined
        ? ` At least ${bound(def.min)}.`
        : def.max !== undefined
          ? ` At most ${bound(def.max)}.`
          : '';
  const unset = def.type === 'boolean' ? '' : ' Leave empty for no explicit value.';
  const units = isByteFeature(def) ? ` ${BYTE_SIZE_HELP}` : '';
  return `${def.description}${def.description.endsWith('.') || def.description === '' ? '' : '.'} Fallback when the tier has no value: ${showValue(def.default, def)}.${bounds}${unset}${units}`;
}

/**
 * The declared features grouped by where they come from: core first, then each plugin. An inactive
 * plugin's features are folded away (still posted with the form, so their values are kept), unless one
 * of them has an error to show.
 */
function featureSections(definitions: FeatureDefinition[], form: TierForm, errors: Errors, services: Services): SafeHtml[] {
  const sources = [...new Set(definitions.map((d) => d.source))];
  return sources.map((source) => {
    const defs = definitions.filter((d) => d.source === source);
    const fields = defs.map((def) => fieldBlock(featureFieldId(def.key), html`${featureLabel(def)} (<code class="ident">${def.key}</code>)`, featureControl(def, form.features[def.key], form.units[def.key]), errors[featureFieldId(def.key)], featureHelp(def)));
    if (source === 'core' || services.plugins.isActive(source)) {
      const driveOff = defs.some(isDriveFeature) && !services.settings.bool('drive_active');
      return html`<fieldset class="features" data-source="${source}"><legend>${source === 'core' ? 'Core features' : `Plugin: ${source}`}</legend>
${driveOff ? html`<p class="notice warning" id="drive-off">Drive is off site-wide (<code class="ident">drive_active</code>): the Drive features below are kept but have no effect until Drive is switched on in <a href="/admin/settings#drive">Settings</a>.</p>` : ''}
${fields}
</fieldset>`;
    }
    const open = defs.some((d) => errors[featureFieldId(d.key)] !== undefined);
    return html`<details class="features" data-source="${source}" data-inactive ${open ? html`open` : ''}><summary>Plugin: ${source} (inactive, ${defs.length} feature${defs.length === 1 ? '' : 's'})</summary>
<p class="help">This plugin is not active, so its features have no effect until it is. Values set here are kept.</p>
${fields}
</details>`;
  });
}

/**
 * The feature coverage audit for one stored tier: features in use (core and active plugins) it has no
 * explicit value for. An inactive plugin's features are left out: they do nothing until it is active.
 */
function coverageWarning(tier: Tier, definitions: FeatureDefinition[], services: Services): SafeHtml {
  const stored = (tier.sbt_features ?? {}) as Record<string, unknown>;
  const missing = definitions.filter((d) => featureInUse(services, d) && !has(stored, d.key));
  if (missing.length === 0) return html``;
  return html`<div class="card" id="coverage-warning" role="status" style="background:#fff7e0;border-color:#f0d58c"><p><strong>Feature coverage:</strong> this tier has no explicit value for ${missing.length} declared feature${missing.length === 1 ? '' : 's'}; members get the fallback until a value is set here.</p>
<ul>${missing.map((d) => html`<li data-feature="${d.key}">${featureLabel(d)} (<code class="ident">${d.key}</code>) — fallback ${showValue(d.default, d)}</li>`)}</ul></div>`;
}

export function tierEditPages(web: FastifyInstance, services: Services): void {
  const { db, clock } = services;
  const registry = services.tiers.registry;

  const loadTier = (id: number) =>
    db.selectFrom('sbt_subscription_tiers').selectAll().where('sbt_subscription_tier_id', '=', id).where('sbt_delete_time', 'is', null).executeTakeFirst();

  function tierId(request: FastifyRequest): number | null {
    const raw = (request.params as { id: string }).id;
    return /^\d{1,9}$/.test(raw) ? Number(raw) : null;
  }

  function renderForm(reply: FastifyReply, viewer: Viewer, tier: Tier | null, form: TierForm, errors: Errors, opts: { flash?: Flash | null; status?: number } = {}) {
    const definitions = registry.all();
    const action = tier ? `/admin/tiers/${tier.sbt_subscription_tier_id}` : '/admin/tiers/new';
    const body = html`${adminNav()}
<p><a href="/admin/tiers">← All tiers</a>${tier ? html` · <a href="/admin/tiers/${tier.sbt_subscription_tier_id}/members">Members</a>` : ''}</p>
${flashNotice(opts.flash ?? null)}
${Object.keys(errors).length ? html`<p class="error" role="alert" id="form-error">${errors.form ?? 'Nothing was saved: fix the fields marked below.'}</p>` : ''}
${tier ? coverageWarning(tier, definitions, services) : ''}
<div class="card"><form method="post" action="${action}" novalidate>
  ${tokenInput(viewer, FORM_NAME)}
  ${fieldBlock('sbt_name', 'Name (internal identifier)', html`<input id="sbt_name" name="sbt_name" type="text" maxlength="100" autocapitalize="none" autocomplete="off" spellcheck="false" style="font-family:monospace" value="${form.sbt_name}">`, errors.sbt_name, 'Lower-case letters, digits and underscores, for example basic, premium, pro_yearly. The tier’s group has the same name.')}
  ${fieldBlock('sbt_display_name', 'Display name', html`<input id="sbt_display_name" name="sbt_display_name" type="text" maxlength="100" value="${form.sbt_display_name}">`, errors.sbt_display_name)}
  ${fieldBlock('sbt_tier_level', 'Level', html`<input id="sbt_tier_level" name="sbt_tier_level" type="number" step="1" min="0" value="${form.sbt_tier_level}">`, errors.sbt_tier_level, '0 or more; higher means a better tier, for example 10, 20, 30.')}
  ${fieldBlock('sbt_description', 'Description', html`<textarea id="sbt_description" name="sbt_description" rows="4">
${form.sbt_description}</textarea>`, errors.sbt_description)}
  ${fieldBlock('sbt_is_active', 'Active', checkboxInput('sbt_is_active', form.sbt_is_active), errors.sbt_is_active, 'Inactive tiers cannot be assigned or purchased.')}
  <h2>Features</h2>
  ${definitions.length === 0 ? html`<p>No features are declared.</p>` : featureSections(definitions, form, errors, services)}
  <button class="primary" type="submit">${tier ? 'Save tier' : 'Create tier'}</button>
</form></div>`;
    return sendViewerPage(reply, viewer, tier ? `Tier: ${tier.sbt_display_name}` : 'New tier', body, opts.status ?? 200);
  }

  web.get('/admin/tiers/new', async (request, reply) => {
    const viewer = await guardPage(request, reply, services, 5);
    if (!viewer) return reply;
    return renderForm(reply, viewer, null, formFromTier(null, registry.all()), {});
  });

  web.post('/admin/tiers/new', async (request, reply) => {
    const viewer = await guardPage(request, reply, services, 5);
    if (!viewer) return reply;
    if (!(await checkPostedForm(request, reply, viewer, FORM_NAME))) return reply;
    const form = formFromRequest(request, registry.all());
    const { errors, features } = parseForm(form, services);
    if (Object.keys(errors).length > 0) return renderForm(reply, viewer, null, form, errors, { status: 400 });
    try {
      const id = await createTier(
        { db, clock, registry, createdBy: viewer.user.usr_user_id },
        {
          sbt_name: form.sbt_name,
          sbt_display_name: form.sbt_display_name,
          sbt_tier_level: Number(form.sbt_tier_level),
          sbt_description: form.sbt_description === '' ? null : form.sbt_description,
          sbt_is_active: form.sbt_is_active,
          sbt_features: features,
        },
      );
      await setFlash(db, viewer.session, { id: 'tier-saved', text: 'Tier created.' });
      return reply.redirect(`/admin/tiers/${id}`, 303);
    } catch (e) {
      if (e instanceof TierInputError) return renderForm(reply, viewer, null, form, serviceErrors(e), { status: 400 });
      throw e;
    }
  });

  web.get('/admin/tiers/:id', async (request, reply) => {
    const viewer = await guardPage(request, reply, services, 5);
    if (!viewer) return reply;
    const id = tierId(request);
    const tier = id === null ? undefined : await loadTier(id);
    if (!tier) return sendViewerPage(reply, viewer, 'Not found', html`${adminNav()}<div class="card"><p>There is no such tier.</p></div>`, 404);
    return renderForm(reply, viewer, tier, formFromTier(tier, registry.all()), {}, { flash: await takeFlash(db, viewer.session) });
  });

  web.post('/admin/tiers/:id', async (request, reply) => {
    const viewer = await guardPage(request, reply, services, 5);
    if (!viewer) return reply;
    if (!(await checkPostedForm(request, reply, viewer, FORM_NAME))) return reply;
    const id = tierId(request);
    const tier = id === null ? undefined : await loadTier(id);
    if (!tier) return sendViewerPage(reply, viewer, 'Not found', html`${adminNav()}<div class="card"><p>There is no such tier.</p></div>`, 404);
    const form = formFromRequest(request, registry.all());
    const { errors, features } = parseForm(form, services);
    if (Object.keys(errors).length > 0) return renderForm(reply, viewer, tier, form, errors, { status: 400 });
    try {
      // The form holds every declared feature, so its values replace sbt_features whole; keys no longer
      // declared are dropped (the registry would refuse them on any write).
      await updateTier(db, clock, registry, tier.sbt_subscription_tier_id, {
        sbt_name: form.sbt_name,
        sbt_display_name: form.sbt_display_name,
        sbt_tier_level: Number(form.sbt_tier_level),
        sbt_description: form.sbt_description === '' ? null : form.sbt_description,
        sbt_is_active: form.sbt_is_active,
        sbt_features: features,
      });
      await setFlash(db, viewer.session, { id: 'tier-saved', text: 'Tier saved.' });
      return reply.redirect(`/admin/tiers/${tier.sbt_subscription_tier_id}`, 303);
    } catch (e) {
      if (e instanceof TierInputError) return renderForm(reply, viewer, tier, form, serviceErrors(e), { status: 400 });
      throw e;
    }
  });
}
