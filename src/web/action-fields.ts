import type { FormField } from '../actions/form.js';
import { html, type SafeHtml } from './html.js';

const text = (v: unknown): string => (v === null || v === undefined ? '' : String(v));

/**
 * One field of an action's form definition (what GET /form/{action} serves) as HTML for action-form.js,
 * with an empty error slot under it for the contract's validation message. Ids are prefixed, so two forms
 * on one page do not clash. Visibility rules are not applied: every field shows.
 */
export function actionField(f: FormField, idPrefix: string): SafeHtml {
  const id = `${idPrefix}${f.name}`;
  const req = f.required ? html` required` : '';
  const max = f.maxlength !== undefined ? html` maxlength="${f.maxlength}"` : '';
  const error = html`<div class="field-error" data-for="${f.name}" id="${id}-error"></div>`;
  switch (f.type) {
    case 'hidden':
      return html`<input type="hidden" name="${f.name}" value="${text(f.value)}">`;
    case 'checkbox':
      return html`<div class="field"><label for="${id}" style="font-weight:400"><input id="${id}" name="${f.name}" type="checkbox" ${f.value === true ? html`checked` : ''}> ${f.label}</label>${error}</div>`;
    case 'textarea':
      return html`<div class="field"><label for="${id}">${f.label}</label><textarea id="${id}" name="${f.name}" rows="3"${req}${max}>${text(f.value)}</textarea>${error}</div>`;
    case 'drop':
      return html`<div class="field"><label for="${id}">${f.label}</label><select id="${id}" name="${f.name}"${req}>
  ${f.required ? '' : html`<option value="">Not given</option>`}
  ${(f.options ?? []).map((o) => html`<option value="${o.value}" ${o.value === f.value ? html`selected` : ''}>${o.label}</option>`)}
</select>${error}</div>`;
    default: {
      const type = f.type === 'date' || f.type === 'email' || f.type === 'password' || f.type === 'number' ? f.type : 'text';
      // The shared style sizes text-like inputs only; a date field gets the same look here.
      const look = type === 'date' ? html` style="width:100%;padding:.5rem;border:1px solid #b8c0cc;border-radius:4px;font:inherit"` : '';
      const auto = f.type === 'email' ? html` autocomplete="email"` : f.type === 'password' ? html` autocomplete="new-password"` : '';
      return html`<div class="field"><label for="${id}">${f.label}</label><input id="${id}" name="${f.name}" type="${type}" value="${text(f.value)}"${req}${max}${auto}${look}>${error}</div>`;
    }
  }
}
