import type { Settings } from './store.js';

/** Whether the store (the shop) is active: only while both products_active and subscriptions_active are on. */
export function storeActive(settings: Pick<Settings, 'bool'>): boolean {
  return settings.bool('products_active') && settings.bool('subscriptions_active');
}
