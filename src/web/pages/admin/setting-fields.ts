import type { SettingDefinition } from '../../../settings/definitions.js';
import { SettingError } from '../../../settings/registry.js';
import { html } from '../../html.js';

/** Parses a posted form value into the setting's type; the registry's validation then has the last word. */
export function parsePosted(def: SettingDefinition, raw: string): unknown {
  if (def.type === 'boolean') return raw === 'true';
  if (def.type === 'integer') return raw.trim() === '' || !/^-?\d+$/.test(raw.trim()) ? Number.NaN : Number(raw.trim());
  return raw.trim();
}

/** A SettingError as a field message: "setting x must be ..." becomes "Must be ...". */
export function settingErrorText(name: string, e: unknown): string {
  if (!(e instanceof SettingError)) throw e;
  return e.message.replace(`setting ${name} `, 'Must ').replace('Must must', 'Must');
}

/** The settings screens' own small nav: General and Store and subscriptions. */
export function settingsNav(current: 'general' | 'subscriptions') {
  const link = (href: string, key: string, text: string) => html`<a href="${href}" id="settings-nav-${key}" ${current === key ? html`aria-current="page" style="font-weight:700;text-decoration:none"` : ''}>${text}</a>`;
  return html`<nav class="sub settings-nav" aria-label="Settings">${link('/admin/settings', 'general', 'General')}${link('/admin/settings/subscriptions', 'subscriptions', 'Store and subscriptions')}</nav>`;
}
