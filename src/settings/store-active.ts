import { billingSourceStatuses, storeSwitchesOn } from './billing-sources.js';
import type { Settings } from './store.js';

/**
 * Whether the store (the shop) is open: both switches (products_active, subscriptions_active) are on AND
 * at least one billing source is configured. A store with nothing to take payments through is closed.
 */
export function storeActive(settings: Pick<Settings, 'bool' | 'string'>): boolean {
  return storeSwitchesOn(settings) && billingSourceStatuses(settings).some((s) => s.configured);
}

/** Why the store is closed, in one sentence for pages and the CLI; null when it is open. */
export function storeClosedReason(settings: Pick<Settings, 'bool' | 'string'>): string | null {
  if (!storeSwitchesOn(settings)) return 'the store switches (products_active and subscriptions_active) are not both on';
  if (!billingSourceStatuses(settings).some((s) => s.configured)) return 'no billing source is configured';
  return null;
}
