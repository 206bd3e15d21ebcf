import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Kysely } from 'kysely';
import type { Row } from '../../../models/define.js';
import { Product } from '../../../models/product.js';
import type { Services } from '../../../services.js';
import { checkValue } from '../../../surfaces/crud/coerce.js';
import { loadRow } from '../../../surfaces/crud/query.js';
import { updateRecord } from '../../../surfaces/crud/write.js';
import { bodyChecked, bodyField, checkboxInput, checkPostedForm, fieldBlock, guardPage, sendViewerPage, tokenInput, type Viewer } from '../../forms.js';
import { html, type SafeHtml } from '../../html.js';
import { adminNav } from './nav.js';

type FieldKind = 'text' | 'textarea' | 'checkbox' | 'tier';

interface ProductField {
  column: string;
  label: string;
  kind: FieldKind;
  help?: string;
  section: 'product' | 'tier' | 'provider';
}

/**
 * What the product edit screen shows, in order. A field is shown only while the Product model declares
 * its column, so the provider references appear once the store's migration and model carry them.
 */
const DECLARED_FIELDS: readonly ProductField[] = [
  { column: 'pro_name', label: 'Name', kind: 'text', section: 'product' },
  { column: 'pro_short_description', label: 'Short description', kind: 'textarea', section: 'product' },
  { column: 'pro_is_active', label: 'Active', kind: 'checkbox', section: 'product' },
  { column: 'pro_sbt_subscription_tier_id', label: 'Tier granted on purchase', kind: 'tier', section: 'tier', help: 'Buying or renewing this product puts the buyer in this tier (upgrade-only). “No tier” grants none.' },
  { column: 'pro_card_price_id', label: 'Card processor price id', kind: 'text', section: 'provider' },
  { column: 'pro_wallet_plan_id', label: 'Wallet provider plan id', kind: 'text', section: 'provider' },
  { column: 'pro_ios_product_id', label: 'iOS App Store product id', kind: 'text', section: 'provider' },
  { column: 'pro_android_product_id', label: 'Android store product id', kind: 'text', section: 'provider' },
];

export const productFields = (): ProductField[] => DECLARED_FIELDS.filter((f) => Product.columns[f.column] !== undefined);

const FORM_NAME = 'product-edit';
const sentence = (message: string) => message.charAt(0).toUpperCase() + message.slice(1) + '.';

interface TierOption {
  sbt_subscription_tier_id: number;
  sbt_name: string;
  sbt_display_name: string;
  sbt_tier_level: number;
  sbt_is_active: boolean;
}

/** Admin → Products: the product list and the edit screen with the tier chooser and provider references. */
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

  function control(field: ProductField, value: unknown, tiers: TierOption[]): SafeHtml {
    const id = field.column;
    switch (field.kind) {
      case 'checkbox':
        return checkboxInput(id, value === true || value === 'true');
      case 'textarea':
        return html`<textarea id="${id}" name="${id}" rows="3">
${value == null ? '' : String(value)}</textarea>`;
      case 'tier': {
        const selected = value == null || value === '' ? '' : String(value);
        return html`<select id="${id}" name="${id}"><option value="" ${selected === '' ? html`selected` : ''}>No tier</option>${tiers.map(
          (t) => html`<option value="${t.sbt_subscription_tier_id}" ${selected === String(t.sbt_subscription_tier_id) ? html`selected` : ''}>${t.sbt_display_name} (${t.sbt_name}, level ${t.sbt_tier_level})${t.sbt_is_active ? '' : ' — inactive'}</option>`,
        )}${
          // A link to a tier deleted since keeps showing, so saving never drops it unnoticed; it is refused until replaced.
          selected !== '' && !tiers.some((t) => String(t.sbt_subscription_tier_id) === selected) ? html`<option value="${selected}" selected>Deleted or unknown tier #${selected}: choose another</option>` : ''
        }</select>`;
      }
      default: {
        const max = Product.columns[id]?.max;
        return html`<input id="${id}" name="${id}" type="text" ${max ? html`maxlength="${max}"` : ''} value="${value == null ? '' : String(value)}">`;
      }
    }
  }

  async function renderEdit(reply: FastifyReply, viewer: Viewer, product: Row, values: Row, errors: Record<string, string>, opts: { saved?: boolean; status?: number } = {}) {
    const fields = productFields();
    const tiers = await liveTiers();
    const block = (f: ProductField) => fieldBlock(f.column, f.label, control(f, values[f.column], tiers), errors[f.column], f.help);
    const providers = fields.filter((f) => f.section === 'provider');
    const body = html`${adminNav()}
<p><a href="/admin/products">← All products</a></p>
${opts.saved ? html`<p class="notice" role="status" id="product-saved">Product saved.</p>` : ''}
${Object.keys(errors).length ? html`<p class="error" role="alert">Nothing was saved: fix the fields marked below.</p>` : ''}
<div class="card"><form method="post" action="/admin/products/${String(product.pro_product_id)}" novalidate>
  ${tokenInput(viewer, FORM_NAME)}
  ${fields.filter((f) => f.section === 'product').map(block)}
  <h2>Subscription tier</h2>
  ${fields.filter((f) => f.section === 'tier').map(block)}
  ${providers.length ? html`<h2>Provider product references</h2><p class="help">The identifiers of this product at each billing source; empty when it is not sold there.</p>${providers.map(block)}` : ''}
  <button class="primary" type="submit">Save product</button>
</form></div>`;
    return sendViewerPage(reply, viewer, `Product: ${String(product.pro_name)}`, body, opts.status ?? 200);
  }

  web.get('/admin/products', async (request, reply) => {
    const viewer = await guardPage(request, reply, services, 5);
    if (!viewer) return reply;
    // pro_products is declared by the Product model, not in the core table types.
    const products: Array<{ pro_product_id: number; pro_name: string; pro_is_active: boolean | null; sbt_display_name: string | null }> = await (db as unknown as Kysely<any>)
      .selectFrom('pro_products')
      .leftJoin('sbt_subscription_tiers', 'sbt_subscription_tier_id', 'pro_sbt_subscription_tier_id')
      .select(['pro_product_id', 'pro_name', 'pro_is_active', 'sbt_display_name'])
      .where('pro_delete_time', 'is', null)
      .orderBy('pro_name')
      .orderBy('pro_product_id')
      .limit(500)
      .execute();
    const body = html`${adminNav()}
<div class="card" style="overflow-x:auto">
${products.length === 0
  ? html`<p>No products yet.</p>`
  : html`<table id="products"><thead><tr><th>Product</th><th>Active</th><th>Tier granted</th></tr></thead><tbody>
${products.map((p) => html`<tr data-product="${p.pro_product_id}"><td><a href="/admin/products/${p.pro_product_id}">${p.pro_name}</a></td><td>${p.pro_is_active ? 'yes' : 'no'}</td><td class="tier">${p.sbt_display_name ?? '—'}</td></tr>`)}
</tbody></table>`}
</div>`;
    return sendViewerPage(reply, viewer, 'Products', body);
  });

  web.get('/admin/products/:id', async (request, reply) => {
    const viewer = await guardPage(request, reply, services, 5);
    if (!viewer) return reply;
    const id = productId(request);
    const product = id === null ? undefined : await loadRow(db, Product, id);
    if (!product) return notFound(reply, viewer);
    const saved = (request.query as Record<string, unknown>).saved === '1';
    return renderEdit(reply, viewer, product, product, {}, { saved });
  });

  web.post('/admin/products/:id', async (request, reply) => {
    const viewer = await guardPage(request, reply, services, 5);
    if (!viewer) return reply;
    if (!(await checkPostedForm(request, reply, viewer, FORM_NAME))) return reply;
    const id = productId(request);
    const product = id === null ? undefined : await loadRow(db, Product, id);
    if (!product || id === null) return notFound(reply, viewer);

    // Each shown field through the model's own column check, every refusal kept for its field.
    const posted: Row = {};
    const changes: Row = {};
    const errors: Record<string, string> = {};
    for (const field of productFields()) {
      const raw = field.kind === 'checkbox' ? String(bodyChecked(request, field.column)) : bodyField(request, field.column).trim();
      posted[field.column] = raw;
      const checked = checkValue(field.column, Product.columns[field.column]!, raw);
      if ('error' in checked) errors[field.column] = sentence(checked.error);
      else changes[field.column] = checked.value;
    }
    const tierId = changes.pro_sbt_subscription_tier_id;
    if (tierId !== undefined && tierId !== null && !(await liveTiers()).some((t) => t.sbt_subscription_tier_id === tierId)) {
      errors.pro_sbt_subscription_tier_id = 'Choose one of the listed tiers.';
    }
    if (Object.keys(errors).length > 0) return renderEdit(reply, viewer, product, posted, errors, { status: 400 });

    await db.transaction().execute(async (trx) => {
      const stored = await loadRow(trx, Product, id, true);
      if (!stored) return;
      const ctx = { db, clock, settings, viewer: { current_user_id: viewer.user.usr_user_id, current_user_permission: viewer.user.usr_permission } };
      await updateRecord(trx, Product, id, stored, changes, ctx);
    });
    return reply.redirect(`/admin/products/${id}?saved=1`, 303);
  });
}
