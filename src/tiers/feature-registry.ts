import { existsSync, readFileSync, readdirSync } from 'node:fs';
import path from 'node:path';
import type { FeatureValue } from '../db/types.js';
import { PLUGINS_DIR, PROJECT_ROOT } from '../lib/paths.js';

export const CORE_FEATURES_FILE = path.join(PROJECT_ROOT, 'includes', 'core_tier_features.json');
export const PLUGIN_FEATURES_FILE = 'tier_features.json';

export type FeatureType = 'integer' | 'boolean' | 'string';

/** One declared tier feature, with its key as stored in sbt_features (plugin keys prefixed). */
export interface FeatureDefinition {
  key: string;
  type: FeatureType;
  label: string;
  description: string;
  /** The fallback used when a tier row has no entry for the key (not a per-tier default). */
  default: FeatureValue;
  min?: number;
  max?: number;
  /** 'core', or the plugin that declared it. */
  source: string;
  file: string;
}

/** A definition file that cannot be used; the service refuses to start with this message. */
export class FeatureDefinitionError extends Error {
  constructor(readonly file: string, readonly key: string | null, problem: string) {
    super(key === null ? `${file}: ${problem}` : `${file}: feature '${key}': ${problem}`);
    this.name = 'FeatureDefinitionError';
  }
}

const TYPES: readonly FeatureType[] = ['integer', 'boolean', 'string'];
const ATTRIBUTES = new Set(['type', 'label', 'description', 'default', 'min', 'max']);
const KEY_RE = /^[a-z][a-z0-9_]*$/;

/** Whether a value has the declared type (integers are safe JS integers). */
export function hasFeatureType(type: FeatureType, value: unknown): value is FeatureValue {
  if (type === 'integer') return typeof value === 'number' && Number.isSafeInteger(value);
  if (type === 'boolean') return typeof value === 'boolean';
  return typeof value === 'string';
}

function validateEntry(file: string, key: string, raw: unknown): Omit<FeatureDefinition, 'key' | 'source' | 'file'> {
  const fail = (problem: string) => new FeatureDefinitionError(file, key, problem);
  if (!KEY_RE.test(key)) throw fail('key must be lower-case letters, digits and underscores, starting with a letter');
  if (raw === null || typeof raw !== 'object' || Array.isArray(raw)) throw fail('definition must be an object');
  const entry = raw as Record<string, unknown>;
  for (const attr of Object.keys(entry)) if (!ATTRIBUTES.has(attr)) throw fail(`unknown attribute '${attr}'`);
  const type = entry.type;
  if (typeof type !== 'string' || !TYPES.includes(type as FeatureType)) throw fail(`type must be one of ${TYPES.join(', ')}`);
  const t = type as FeatureType;
  if (typeof entry.label !== 'string' || entry.label.trim() === '') throw fail('label must be a non-empty string');
  if (typeof entry.description !== 'string') throw fail('description must be a string');
  if (!('default' in entry)) throw fail('default is required');
  if (!hasFeatureType(t, entry.default)) throw fail(`default must be of type ${t}`);
  const def: Omit<FeatureDefinition, 'key' | 'source' | 'file'> = { type: t, label: entry.label, description: entry.description, default: entry.default };
  for (const bound of ['min', 'max'] as const) {
    if (entry[bound] === undefined) continue;
    if (t !== 'integer') throw fail(`${bound} is allowed only on integer features`);
    const v = entry[bound];
    if (typeof v !== 'number' || !Number.isSafeInteger(v)) throw fail(`${bound} must be an integer`);
    def[bound] = v;
  }
  if (def.min !== undefined && def.max !== undefined && def.min > def.max) throw fail(`min (${def.min}) is greater than max (${def.max})`);
  if (t === 'integer') {
    const d = def.default as number;
    if (def.min !== undefined && d < def.min) throw fail(`default (${d}) is below min (${def.min})`);
    if (def.max !== undefined && d > def.max) throw fail(`default (${d}) is above max (${def.max})`);
  }
  return def;
}

function readDefinitionFile(file: string): Record<string, unknown> {
  let parsed: unknown;
  try {
    parsed = JSON.parse(readFileSync(file, 'utf8'));
  } catch (e) {
    throw new FeatureDefinitionError(file, null, `not valid JSON (${(e as Error).message})`);
  }
  if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed)) {
    throw new FeatureDefinitionError(file, null, 'must be an object keyed by feature key');
  }
  return parsed as Record<string, unknown>;
}

export interface FeatureRegistryOptions {
  coreFile?: string;
  pluginsDir?: string;
}

/**
 * Every declared tier feature: the core file (keys unprefixed) and each plugins/{plugin}/tier_features.json
 * (keys prefixed '{plugin}_'), for every plugin folder whether or not the plugin is active, because the
 * admin tier screen lists them all.
 */
export class FeatureRegistry {
  private readonly byKey: ReadonlyMap<string, FeatureDefinition>;

  constructor(definitions: FeatureDefinition[]) {
    this.byKey = new Map(definitions.map((d) => [d.key, d]));
  }

  /** Reads and validates every definition file; throws FeatureDefinitionError naming the file and key. */
  static load(opts: FeatureRegistryOptions = {}): FeatureRegistry {
    const coreFile = opts.coreFile ?? CORE_FEATURES_FILE;
    const pluginsDir = opts.pluginsDir ?? PLUGINS_DIR;
    const defs: FeatureDefinition[] = [];
    const seen = new Map<string, string>();
    const add = (file: string, source: string, key: string, raw: unknown, prefix: string) => {
      const def = { ...validateEntry(file, key, raw), key: `${prefix}${key}`, source, file };
      const earlier = seen.get(def.key);
      if (earlier) throw new FeatureDefinitionError(file, key, `key ${def.key} is already declared in ${earlier}`);
      seen.set(def.key, file);
      defs.push(def);
    };
    if (existsSync(coreFile)) {
      for (const [key, raw] of Object.entries(readDefinitionFile(coreFile))) add(coreFile, 'core', key, raw, '');
    }
    if (existsSync(pluginsDir)) {
      const plugins = readdirSync(pluginsDir, { withFileTypes: true })
        .filter((e) => e.isDirectory())
        .map((e) => e.name)
        .sort();
      for (const plugin of plugins) {
        const file = path.join(pluginsDir, plugin, PLUGIN_FEATURES_FILE);
        if (!existsSync(file)) continue;
        for (const [key, raw] of Object.entries(readDefinitionFile(file))) add(file, plugin, key, raw, `${plugin}_`);
      }
    }
    return new FeatureRegistry(defs);
  }

  get(key: string): FeatureDefinition | undefined {
    return this.byKey.get(key);
  }

  keys(): string[] {
    return [...this.byKey.keys()];
  }

  all(): FeatureDefinition[] {
    return [...this.byKey.values()];
  }

  /** A tier's value for every declared key: its explicit entry, else the declared fallback. */
  resolveAll(tierFeatures: Record<string, unknown>): Record<string, FeatureValue> {
    const out: Record<string, FeatureValue> = {};
    for (const def of this.byKey.values()) out[def.key] = this.resolve(def, tierFeatures);
    return out;
  }

  resolve(def: FeatureDefinition, tierFeatures: Record<string, unknown>): FeatureValue {
    const v = Object.prototype.hasOwnProperty.call(tierFeatures, def.key) ? tierFeatures[def.key] : undefined;
    // A stored value that no longer fits the definition (the file changed) falls back rather than leaking.
    return v !== undefined && hasFeatureType(def.type, v) ? v : def.default;
  }

  /**
   * Checks a whole sbt_features object against the definitions: unknown keys, wrong types and values
   * outside min/max. Returns one message per bad key (empty when valid).
   */
  validateValues(features: unknown): { ok: true; value: Record<string, FeatureValue> } | { ok: false; errors: Record<string, string> } {
    if (features === null || typeof features !== 'object' || Array.isArray(features)) {
      return { ok: false, errors: { sbt_features: 'must be a JSON object mapping feature key to value' } };
    }
    const errors: Record<string, string> = {};
    const value: Record<string, FeatureValue> = {};
    for (const [key, v] of Object.entries(features as Record<string, unknown>)) {
      const def = this.byKey.get(key);
      if (!def) {
        errors[key] = 'is not a declared feature';
        continue;
      }
      if (!hasFeatureType(def.type, v)) {
        errors[key] = `must be ${def.type === 'integer' ? 'an integer' : `a ${def.type}`}`;
        continue;
      }
      if (def.type === 'integer') {
        const n = v as number;
        if (def.min !== undefined && n < def.min) {
          errors[key] = `must be at least ${def.min}`;
          continue;
        }
        if (def.max !== undefined && n > def.max) {
          errors[key] = `must be at most ${def.max}`;
          continue;
        }
      }
      value[key] = v as FeatureValue;
    }
    return Object.keys(errors).length > 0 ? { ok: false, errors } : { ok: true, value };
  }
}
