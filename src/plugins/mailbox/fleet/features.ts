import type { Kysely } from 'kysely';
import type { DB } from '../../../db/types.js';
import { TierFeatureReader, type UserTierCache } from '../../../tiers/features.js';
import type { FeatureRegistry } from '../../../tiers/feature-registry.js';

/** The customer's fleet features (plugins/mailbox/tier_features.json, prefixed with the plugin's name). */
export interface FleetFeatures {
  slot: boolean;
  maxDomains: number;
}

/** Tierless customers have no slot and no domains: the fleet fails closed. */
export const FLEET_FAIL_CLOSED: FleetFeatures = { slot: false, maxDomains: 0 };

export async function fleetFeatures(db: Kysely<DB>, registry: FeatureRegistry, userId: number, userTiers?: UserTierCache): Promise<FleetFeatures> {
  const reader = new TierFeatureReader(db, registry, userTiers);
  const [slot, maxDomains] = await Promise.all([
    reader.getUserFeature(userId, 'mailbox_fleet_slot', FLEET_FAIL_CLOSED.slot),
    reader.getUserFeature(userId, 'mailbox_fleet_max_domains', FLEET_FAIL_CLOSED.maxDomains),
  ]);
  return { slot: slot === true, maxDomains: typeof maxDomains === 'number' ? maxDomains : 0 };
}

