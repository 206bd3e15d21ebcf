import type { FeatureValue } from '../db/types.js';
import { formatBytes } from '../lib/byte-size.js';
import type { Plugins } from '../settings/plugins.js';
import type { FeatureDefinition } from '../tiers/feature-registry.js';

// How tier features are shown on pages (the tier editor, the pricing page, the member's subscription).

/** Integer features whose key says they count bytes (drive_storage_bytes): typed with a unit, stored as bytes. */
export const isByteFeature = (def: FeatureDefinition) => def.type === 'integer' && def.key.endsWith('_bytes');

/** A feature's label as shown next to a typed size: "(bytes)" is dropped, since sizes are typed with units. */
export const featureLabel = (def: FeatureDefinition) => (isByteFeature(def) ? def.label.replace(/\s*\(bytes\)$/i, '') : def.label);

export function showValue(v: FeatureValue, def?: FeatureDefinition): string {
  if (typeof v === 'boolean') return v ? 'on' : 'off';
  if (typeof v === 'string') return v === '' ? '(empty)' : `"${v}"`;
  return def && isByteFeature(def) ? formatBytes(v) : String(v);
}

/**
 * Whether a feature's source is in use: core always, a plugin's only while the plugin is active. Pages
 * that show features to members (pricing, the member's subscription) list only these.
 */
export const featureInUse = (services: { plugins: Pick<Plugins, 'isActive'> }, def: FeatureDefinition) => def.source === 'core' || services.plugins.isActive(def.source);

/** A core Drive feature (drive_storage_bytes, ...): it does nothing while the setting drive_active is off. */
export const isDriveFeature = (def: FeatureDefinition) => def.source === 'core' && def.key.startsWith('drive_');
