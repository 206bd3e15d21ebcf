import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Kysely } from 'kysely';
import { formatMoney, isCurrencyCode, minorToDecimal, parseMoney } from '../../../lib/money.js';
import type { Row } from '../../../models/define.js';
import { Product } from '../../../models/product.js';
import { slugFromTitle } from '../../../models/editorial.js';
import type { Services } from '../../../services.js';
import { checkValue } from '../../../surfaces/crud/coerce.js';
import { insertRow, loadRow } from '../../../surfaces/crud/query.js';
import { stampTimes, updateRecord } from '../../../surfaces/crud/write.js';
import { flashNotice, setFlash, takeFlash } from '../../flash.js';
import { bodyChecked, bodyField, checkboxInput, checkPostedForm, fieldBlock, guardPage, hasBodyField, sendViewerPage, tokenInput, type Viewer } from '../../forms.js';
import { html, type SafeHtml } from '../../html.js';
import { adminNav } from './nav.js';

type FieldKind = 'text' | 'link' | 'textarea' | 'checkbox' | 'tier' | 'money' | 'currency' | 'period';

interface ProductField {
  column: string;
  label: string;
  kind: FieldKind;
  help?: string;
  section: 'product' | 'price' | 'tier' | 'provider';
}

const PERIODS: ReadonlyArray<readonly [string, string]> = [
  ['', 'One-time purchase'],
  ['month', 'Every month'],
  ['year', 'Every year'],
  ['week', 'Every week'],
  ['day', 'Every day'],
];

/**
 * What the product screens show, in order. A field is shown only while the Product model declares
 * its column, so the provider references appear once the store's migration and model carry them.
 */
const DECLARED_FIELDS: readonly ProductField[] = [
  { column: 'pro_name', label: 'Name', kind: 'text', section: 'product' },
  { column: 'pro_link', label: 'Link name', kind: 'link', section: 'product', help: 'The product’s name in links, for example premium-monthly. Left empty, it is made from the name.' },
  { column: 'pro_short_description', label: 'Short description', kind: 'textarea', section: 'product' },
  { column: 'pro_is_active', label: 'Active (on sale)', kind: 'checkbox', section: 'product' },
  { column: 'pro_price', label: 'Price', kind: 'money', section: 'price', help: 'In the currency below, as you would write it: 12.50. Empty: the product has no price and cannot be checked out.' },
  { column: 'pro_currency', label: 'Currency', kind: 'currency', section: 'price', help: 'Three-letter ISO code, for example USD, EUR, GBP, JPY.' },
  { column: 'pro_subscription_period', label: 'Billing period', kind: 'period', section: 'price', help: 'How often a subscription renews; the pricing page shows the price per this period.' },
  { column: 'pro_sbt_subscription_tier_id', label: 'Tier granted on purchase', kind: 'tier', section: 'tier', help: 'Buying or renewing this product puts the buyer in this tier (upgrade-only). “No tier” grants none.' },
  { column: 'pro_card_price_id', label: 'Card processor price id', kind: 'text', section: 'provider' },
  { column: 'pro_wallet_plan_id', label: 'Wallet provider plan id', kind: 'text', section: 'provider' },
  { column: 'pro_ios_product_id', label: 'iOS App Store product id', kind: 'text', section: 'provider' },
  { column: 'pro_android_product_id', label: 'Android store product id', kind: 'text', section: 'provider' },
];

export const productFields = (): ProductField[] => DECLARED_FIELDS.filter((f) => Product.columns[f.column] !== undefined);

const FORM_NAME = 'product-edit';
const sentence = (message: string) => message.charAt(0).toUpperCase() + message.slice(1) + (message.endsWith('.') ? '' : '.');

/** The form as text, field by field: what is shown in the inputs (a stored row's values, or what was typed). */
type ProductForm = Record<string, string>;

const NEW_PRODUCT: ProductForm = { pro_is_active: 'true', pro_currency: 'USD', pro_subscription_period: 'month' };

function formFromRow(product: Row): ProductForm {
  const form: ProductForm = {};
  const currency = String(product.pro_currency ?? 'usd');
  for (const f of productFields()) {
    const v = product[f.column];
    if (f.kind === 'money') form[f.column] = v === null || v === undefined ? '' : minorToDecimal(Number(v), currency);
    else if (f.kind === 'currency') form[f.column] = currency.toUpperCase();
    else if (f.kind === 'checkbox') form[f.column] = String(v === true);
    else form[f.column] = v === null || v === undefined ? '' : String(v);
  }
  return form;
}

/**
 * The posted form checked field by field: price and currency by the money rules (a decimal in the
 * currency's minor unit), everything else by the model's own column check. A field the post leaves
 * out keeps `base` (the stored product, or a new product's defaults). Every refusal is kept for its
 * field; `values` holds what would be stored.
 */
function readForm(request: FastifyRequest, base: ProductForm): { form: ProductForm; values: Row; errors: Record<string, string> } {
  const form: ProductForm = {};
  const values: Row = {};
  const errors: Record<string, string> = {};
  for (const field of productFields()) {
    if (!hasBodyField(request, field.column)) form[field.column] = base[field.column] ?? '';
    else form[field.column] = field.kind === 'checkbox' ? String(bodyChecked(request, field.column)) : bodyField(request, field.column).trim();
  }

  const currency = (form.pro_currency ?? '').toLowerCase();
  if (form.pro_currency !== undefined) {
    if (isCurrencyCode(currency)) values.pro_currency = currency;
    else errors.pro_currency = 'Enter a three-letter currency code such as USD or EUR.';
  }
  for (const field of productFields()) {
    if (field.kind === 'currency') continue;
    let raw = form[field.column]!;
    if (field.kind === 'link' && raw === '') raw = slugFromTitle(form.pro_name ?? '', 'product');
    if (field.kind === 'money' && raw !== '') {
      const parsed = parseMoney(raw, isCurrencyCode(currency) ? currency : 'usd');
      if ('error' in parsed) {
        errors[field.column] = parsed.error;
        continue;
      }
      raw = String(parsed.value);
    }
    const checked = checkValue(field.column, Product.columns[field.column]!, raw);
    if ('error' in checked) errors[field.column] = sentence(checked.error);
    else values[field.column] = checked.value;
  }
  return { form, values, errors };
}

interface TierOption {
  sbt_subscription_tier_id: number;
  sbt_name: string;
  sbt_display_name: string;
  sbt_tier_level: number;
  sbt_is_active: boolean;
}

/** Admin → Products: the product list, and the create and edit screens with price, tier chooser and provider references. */
export function productAdminPages(web: FastifyInstance, services: Services): void {
  const { db, clock, settings } = services;

  const liveTiers = (): Promise<TierOption[]> =>
    db
      .selectFrom('sbt_subscription_tiers')
      .select(['sbt_subscription_tier_id', 'sbt_name', 'sbt_display_name', 'sbt_tier_level', 'sbt_is_active'])
      .where('sbt_delete_time', 'is', null)
      .orderBy('sbt_tier_level')
      .orderBy('sbt_name')
      .execute();

  function productId(request: FastifyRequest): number | null {
    const raw = (request.params as { id: string }).id;
    return /^\d{1,15}$/.test(raw) ? Number(raw) : null;
  }

  const notFound = (reply: FastifyReply, viewer: Viewer) => sendViewerPage(reply, viewer, 'Not found', html`${adminNav()}<div class="card"><p>There is no such product.</p></div>`, 404);

  function control(field: ProductField, value: string, tiers: TierOption[]): SafeHtml {
    const id = field.column;
    switch (field.kind) {
      case 'checkbox':
        return checkboxInput(id, value === 'true');
      case 'textarea':
        return html`<textarea id="${id}" name="${id}" rows="3">
${value}</textarea>`;
      case 'money':
        return html`<input id="${id}" name="${id}" type="text" inputmode="decimal" autocomplete="off" placeholder="12.50" value="${value}">`;
      case 'currency':
        return html`<input id="${id}" name="${id}" type="text" maxlength="3" autocapitalize="characters" spellcheck="false" style="max-width:7rem;text-transform:uppercase" value="${value}">`;
      case 'period':
        return html`<select id="${id}" name="${id}">${PERIODS.map(([v, label]) => html`<option value="${v}" ${value === v ? html`selected` : ''}>${label}</option>`)}</select>`;
      case 'tier': {
        return html`<select id="${id}" name="${id}"><option value="" ${value === '' ? html`selected` : ''}>No tier</option>${tiers.map(
          (t) => html`<option value="${t.sbt_subscription_tier_id}" ${value === String(t.sbt_subscription_tier_id) ? html`selected` : ''}>${t.sbt_display_name} (${t.sbt_name}, level ${t.sbt_tier_level})${t.sbt_is_active ? '' : ' — inactive'}</option>`,
        )}${
          // A link to a tier deleted since keeps showing, so saving never drops it unnoticed; it is refused until replaced.
          value !== '' && !tiers.some((t) => String(t.sbt_subscription_tier_id) === value) ? html`<option value="${value}" selected>Deleted or unknown tier #${value}: choose another</option>` : ''
        }</select>`;
      }
      default: {
        const max = Product.columns[id]?.max;
        return html`<input id="${id}" name="${id}" type="text" ${max ? html`maxlength="${max}"` : ''} value="${value}">`;
      }
    }
  }

  async function renderForm(reply: FastifyReply, viewer: Viewer, product: Row | null, form: ProductForm, errors: Record<string, string>, opts: { status?: number; notice?: SafeHtml | '' } = {}) {
    const fields = productFields();
    const tiers = await liveTiers();
    const block = (f: ProductField) => fieldBlock(f.column, f.label, control(f, form[f.column] ?? '', tiers), errors[f.column], f.help);
    const section = (name: ProductField['section']) => fields.filter((f) => f.section === name).map(block);
    const providers = fields.filter((f) => f.section === 'provider');
    const action = product ? `/admin/products/${String(product.pro_product_id)}` : '/admin/products/new';
    const body = html`${adminNav()}
<p><a href="/admin/products">← All products</a></p>
${opts.notice ?? ''}
${Object.keys(errors).length ? html`<p class="error" role="alert" id="form-error">Nothing was saved: fix the fields marked below.</p>` : ''}
<div class="card"><form method="post" action="${action}" novalidate>
  ${tokenInput(viewer, FORM_NAME)}
  ${section('product')}
  <h2>Price</h2>
  ${section('price')}
  <h2>Subscription tier</h2>
  ${section('tier')}
  ${providers.length ? html`<h2>Provider product references</h2><p class="help">The identifiers of this product at each billing source; empty when it is not sold there.</p>${providers.map(block)}` : ''}
  <button class="primary" type="submit">${product ? 'Save product' : 'Create product'}</button>
</form></div>`;
    return sendViewerPage(reply, viewer, product ? `Product: ${String(product.pro_name)}` : 'New product', body, opts.status ?? 200);
  }

  /** The chosen tier must be a live one (the select can be posted with any id). */
  async function checkTier(values: Row, errors: Record<string, string>) {
    const tierId = values.pro_sbt_subscription_tier_id;
    if (tierId !== undefined && tierId !== null && !(await liveTiers()).some((t) => t.sbt_subscription_tier_id === tierId)) {
      errors.pro_sbt_subscription_tier_id = 'Choose one of the listed tiers.';
    }
  }

  const modelContext = (viewer: Viewer & { user: { usr_user_id: number; usr_permission: number } }) => ({
    db,
    clock,
    settings,
    featureRegistry: services.tiers.registry,
    viewer: { current_user_id: viewer.user.usr_user_id, current_user_permission: viewer.user.usr_permission },
    caches: services.modelCaches,
  });

  web.get('/admin/products', async (request, reply) => {
    const viewer = await guardPage(request, reply, services, 5);
    if (!viewer) return reply;
    // pro_subscription_period (0010) is not in the core table types.
    const products: Array<{ pro_product_id: number; pro_name: string; pro_is_active: boolean | null; pro_price: number | null; pro_currency: string; pro_subscription_period: string | null; sbt_display_name: string | null }> = await (
      db as unknown as Kysely<any>
    )
      .selectFrom('pro_products')
      .leftJoin('sbt_subscription_tiers', 'sbt_subscription_tier_id', 'pro_sbt_subscription_tier_id')
      .select(['pro_product_id', 'pro_name', 'pro_is_active', 'pro_price', 'pro_currency', 'pro_subscription_period', 'sbt_display_name'])
      .where('pro_delete_time', 'is', null)
      .orderBy('pro_name')
      .orderBy('pro_product_id')
      .limit(500)
      .execute();
    const body = html`${adminNav()}
<p><a href="/admin/products/new" id="new-product">New product</a></p>
<div class="card" style="overflow-x:auto">
${products.length === 0
  ? html`<p>No products yet.</p>`
  : html`<table id="products" class="stack"><thead><tr><th>Product</th><th>Price</th><th>Active</th><th>Tier granted</th></tr></thead><tbody>
${products.map(
  (p) => html`<tr data-product="${p.pro_product_id}"><td><a href="/admin/products/${p.pro_product_id}">${p.pro_name}</a></td>
<td class="price" data-label="Price">${p.pro_price === null ? 'no price' : html`${formatMoney(Number(p.pro_price), p.pro_currency)}${p.pro_subscription_period ? ` per ${p.pro_subscription_period}` : ''}`}</td>
<td data-label="Active">${p.pro_is_active ? 'yes' : 'no'}</td><td class="tier" data-label="Tier">${p.sbt_display_name ?? '—'}</td></tr>`,
)}
</tbody></table>`}
</div>`;
    return sendViewerPage(reply, viewer, 'Products', body);
  });

  web.get('/admin/products/new', async (request, reply) => {
    const viewer = await guardPage(request, reply, services, 5);
    if (!viewer) return reply;
    return renderForm(reply, viewer, null, NEW_PRODUCT, {});
  });

  web.post('/admin/products/new', async (request, reply) => {
    const viewer = await guardPage(request, reply, services, 5);
    if (!viewer) return reply;
    if (!(await checkPostedForm(request, reply, viewer, FORM_NAME))) return reply;
    const { form, values, errors } = readForm(request, NEW_PRODUCT);
    await checkTier(values, errors);
    if (Object.keys(errors).length > 0) return renderForm(reply, viewer, null, form, errors, { status: 400 });
    stampTimes(Product, values, clock.now(), true);
    const id = await insertRow(db, Product, values);
    await setFlash(db, viewer.session, { id: 'product-saved', text: 'Product created.' });
    return reply.redirect(`/admin/products/${id}`, 303);
  });

  web.get('/admin/products/:id', async (request, reply) => {
    const viewer = await guardPage(request, reply, services, 5);
    if (!viewer) return reply;
    const id = productId(request);
    const product = id === null ? undefined : await loadRow(db, Product, id, false, undefined, services.modelCaches);
    if (!product) return notFound(reply, viewer);
    return renderForm(reply, viewer, product, formFromRow(product), {}, { notice: flashNotice(await takeFlash(db, viewer.session)) });
  });

  web.post('/admin/products/:id', async (request, reply) => {
    const viewer = await guardPage(request, reply, services, 5);
    if (!viewer) return reply;
    if (!(await checkPostedForm(request, reply, viewer, FORM_NAME))) return reply;
    const id = productId(request);
    const product = id === null ? undefined : await loadRow(db, Product, id, false, undefined, services.modelCaches);
    if (!product || id === null) return notFound(reply, viewer);
    const { form, values, errors } = readForm(request, formFromRow(product));
    await checkTier(values, errors);
    if (Object.keys(errors).length > 0) return renderForm(reply, viewer, product, form, errors, { status: 400 });

    await db.transaction().execute(async (trx) => {
      const stored = await loadRow(trx, Product, id, true);
      if (!stored) return;
      await updateRecord(trx, Product, id, stored, values, modelContext(viewer));
    });
    await setFlash(db, viewer.session, { id: 'product-saved', text: 'Product saved.' });
    return reply.redirect(`/admin/products/${id}`, 303);
  });
}
