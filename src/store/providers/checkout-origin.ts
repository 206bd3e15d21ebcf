import type { Settings } from '../../settings/store.js';

/**
 * The origin of the card processor's hosted checkout pages, which the cart page's checkout form is
 * redirected to (its Content-Security-Policy form-action must allow it). With card_processor_api_base set
 * (a self-hosted or test provider), checkout pages are served from that same origin.
 */
export function hostedCheckoutOrigin(settings: Settings): string {
  const base = settings.string('card_processor_api_base');
  if (base) {
    try {
      return new URL(base).origin;
    } catch {
      // An unparsable base cannot host a checkout either; fall back to the provider's own.
    }
  }
  return 'https://checkout.stripe.com';
}
