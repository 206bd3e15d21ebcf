import type { FastifyInstance } from 'fastify';
import type { Kysely } from 'kysely';
import type { DB, FeatureValue } from '../../db/types.js';
import { formatMoney } from '../../lib/money.js';
import type { Services } from '../../services.js';
import type { SubscriptionPeriod } from '../../store/lifecycle/tables.js';
import type { FeatureDefinition } from '../../tiers/feature-registry.js';
import { sendViewerPage } from '../forms.js';
import { html, type SafeHtml } from '../html.js';
import { pageViewer } from '../viewer.js';
import { featureInUse, featureLabel, isByteFeature, isDriveFeature, showValue } from '../feature-display.js';

export interface Plan {
  productId: number;
  name: string;
  description: string | null;
  price: number;
  currency: string;
  period: SubscriptionPeriod | null;
  tierId: number;
  tierName: string;
  tierDisplayName: string;
  tierLevel: number;
  features: Record<string, unknown>;
}

interface PlanRow {
  pro_product_id: number;
  pro_name: string;
  pro_short_description: string | null;
  pro_price: number;
  pro_currency: string;
  pro_subscription_period: SubscriptionPeriod | null;
  sbt_subscription_tier_id: number;
  sbt_name: string;
  sbt_display_name: string;
  sbt_tier_level: number;
  sbt_features: Record<string, unknown> | null;
}

/** Products on sale that grant a live, active tier and have a price: lowest tier first, then cheapest. */
export async function plansOnSale(db: Kysely<DB>): Promise<Plan[]> {
  // The store's product columns (price, currency, period) are outside the core table types.
  const rows: PlanRow[] = await (db as unknown as Kysely<any>)
    .selectFrom('pro_products')
    .innerJoin('sbt_subscription_tiers', 'sbt_subscription_tier_id', 'pro_sbt_subscription_tier_id')
    .select(['pro_product_id', 'pro_name', 'pro_short_description', 'pro_price', 'pro_currency', 'pro_subscription_period', 'sbt_subscription_tier_id', 'sbt_name', 'sbt_display_name', 'sbt_tier_level', 'sbt_features'])
    .where('pro_is_active', '=', true)
    .where('pro_delete_time', 'is', null)
    .where('pro_price', 'is not', null)
    .where('sbt_is_active', '=', true)
    .where('sbt_delete_time', 'is', null)
    .orderBy('sbt_tier_level')
    .orderBy('pro_price')
    .orderBy('pro_product_id')
    .limit(100)
    .execute();
  return rows.map((r) => ({
    productId: Number(r.pro_product_id),
    name: r.pro_name,
    description: r.pro_short_description,
    price: Number(r.pro_price),
    currency: r.pro_currency,
    period: r.pro_subscription_period,
    tierId: r.sbt_subscription_tier_id,
    tierName: r.sbt_name,
    tierDisplayName: r.sbt_display_name,
    tierLevel: r.sbt_tier_level,
    features: r.sbt_features ?? {},
  }));
}

const effective = (plan: Plan, def: FeatureDefinition): FeatureValue => (Object.prototype.hasOwnProperty.call(plan.features, def.key) ? (plan.features[def.key] as FeatureValue) : def.default);

/**
 * The features worth comparing: in use (core and active plugins) and not the same on every listed tier.
 * With a single tier nothing differs, so its explicitly set features are shown instead.
 */
export function differingFeatures(plans: Plan[], definitions: FeatureDefinition[]): FeatureDefinition[] {
  const tiers = [...new Map(plans.map((p) => [p.tierId, p])).values()];
  if (tiers.length === 1) return definitions.filter((d) => Object.prototype.hasOwnProperty.call(tiers[0]!.features, d.key));
  return definitions.filter((d) => new Set(tiers.map((t) => JSON.stringify(effective(t, d)))).size > 1);
}

function featureLine(plan: Plan, def: FeatureDefinition): SafeHtml {
  const v = effective(plan, def);
  if (typeof v === 'boolean') return html`<li data-feature="${def.key}" class="${v ? 'yes' : 'no'}">${v ? '✓' : '✗'} ${featureLabel(def)}</li>`;
  const shown = typeof v === 'number' && isByteFeature(def) ? showValue(v, def) : String(v);
  return html`<li data-feature="${def.key}">${featureLabel(def)}: <strong>${shown === '' ? 'none' : shown}</strong></li>`;
}

const PERIOD_WORDS: Record<SubscriptionPeriod, string> = { day: 'day', week: 'week', month: 'month', year: 'year' };

/** The public price list: every tier product on sale, the features that set the tiers apart, and "Choose" into the cart. */
export function pricingPage(web: FastifyInstance, services: Services): void {
  web.get('/pricing', async (request, reply) => {
    const viewer = await pageViewer(request, services);
    const plans = await plansOnSale(services.db);
    const features = differingFeatures(
      plans,
      services.tiers.registry.all().filter((d) => featureInUse(services, d)),
    );
    const open = services.store.active();
    const driveOff = features.some(isDriveFeature) && !services.settings.bool('drive_active');
    const body = html`${!open && plans.length > 0 ? html`<p class="help" id="store-closed">The store is closed at the moment: plans can be compared but not bought.</p>` : ''}
${driveOff && plans.length > 0 ? html`<p class="notice warning" id="drive-off">Drive is off site-wide at the moment: the Drive features listed below are not available yet.</p>` : ''}
${plans.length === 0
  ? html`<div class="card"><p id="no-plans">There are no plans on sale at the moment.</p></div>`
  : html`<div class="grid" id="plans">${plans.map(
      (p) => html`<div class="card plan" data-product="${p.productId}" data-tier="${p.tierName}">
  <h2>${p.name}</h2>
  <div class="help">${p.tierDisplayName}</div>
  <div class="price">${formatMoney(p.price, p.currency)}${p.period ? html`<span class="per"> / ${PERIOD_WORDS[p.period]}</span>` : html`<span class="per"> once</span>`}</div>
  ${p.description ? html`<p>${p.description}</p>` : ''}
  ${features.length ? html`<ul class="features">${features.map((d) => featureLine(p, d))}</ul>` : ''}
  ${open ? html`<button class="primary choose" type="button" data-product="${p.productId}">Choose</button>` : ''}
</div>`,
    )}</div>
<p role="status" id="pricing-result" class="error"></p>
<script src="/static/pricing.js" defer></script>`}`;
    return sendViewerPage(reply, viewer, 'Pricing', body, 200, { wide: true });
  });
}
