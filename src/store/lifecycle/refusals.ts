import { businessError, type ApiError } from '../../http/errors.js';
import { storeActive } from '../../settings/store-active.js';
import type { Settings } from '../../settings/store.js';
import type { BillingSource } from '../../tiers/membership.js';

/**
 * Why a lifecycle request was refused: a closed set, carried as data.reason of the 422 ActionError so
 * that clients (the member web view, native apps) branch on it; the message is for display.
 */
export type RefusalReason =
  | 'store_inactive'
  | 'cancellation_disabled'
  | 'downgrades_disabled'
  | 'reactivation_disabled'
  | 'no_subscription'
  | 'not_cancellable'
  | 'already_cancelled'
  | 'not_cancelled'
  | 'expired'
  | 'store_billed'
  | 'same_tier'
  | 'not_a_tier_product'
  | 'product_unavailable'
  | 'tier_conflict';

export const refuse = (reason: RefusalReason, message: string, extra: Record<string, unknown> = {}): ApiError =>
  businessError(message, { reason, ...extra });

/** The store component is active when both store switches are on (DESIGN 7). */

export function requireStoreActive(settings: Settings): void {
  if (!storeActive(settings)) throw refuse('store_inactive', 'Subscriptions are not sold here at the moment, so they cannot be changed.');
}

export type StoreBilledSource = 'ios_store' | 'android_store';
export const isStoreBilled = (source: BillingSource | null): source is StoreBilledSource => source === 'ios_store' || source === 'android_store';

const STORE_NAMES: Record<StoreBilledSource, string> = { ios_store: 'the App Store', android_store: 'Google Play' };

/** A store-billed subscription is managed only in the store it was bought in. */
export function storeBilledRefusal(source: StoreBilledSource, what: string): ApiError {
  const store = STORE_NAMES[source];
  return refuse(
    'store_billed',
    `This subscription is billed through ${store}, so it cannot be ${what} here. Manage it in ${store}'s subscription settings on your device.`,
    { payment_source: source },
  );
}
