import { settingDefinitions, type SettingDefinition } from './definitions.js';

const definitions: SettingDefinition[] = [...settingDefinitions];
const byName = new Map(definitions.map((d) => [d.name, d]));
/** Who declared each plugin setting (the plugin's name); core settings are absent. */
const declaredBy = new Map<string, string>();

export class SettingError extends Error {}

export function settingDefinition(name: string): SettingDefinition | undefined {
  return byName.get(name);
}

export function allSettingDefinitions(): readonly SettingDefinition[] {
  return definitions;
}

/** Where a setting comes from: 'core', or the name of the plugin that declares it. */
export function settingSource(name: string): string {
  return declaredBy.get(name) ?? 'core';
}

/** A plugin's settings join the core's (src/boot/plugins.ts); a name may be declared once. */
export function registerSettingDefinitions(defs: readonly SettingDefinition[], plugin?: string): void {
  for (const d of defs) {
    if (byName.has(d.name)) throw new SettingError(`setting ${d.name} is declared twice`);
    definitions.push(d);
    byName.set(d.name, d);
    if (plugin) declaredBy.set(d.name, plugin);
  }
}

/** Checks a value against its definition; returns the canonical value or throws SettingError. */
export function validateSettingValue(def: SettingDefinition, value: unknown): unknown {
  const fail = (why: string): never => {
    throw new SettingError(`setting ${def.name} ${why}`);
  };
  switch (def.type) {
    case 'boolean':
      if (typeof value === 'boolean') return value;
      return fail('must be true or false');
    case 'integer':
      if (typeof value !== 'number' || !Number.isInteger(value)) return fail('must be an integer');
      if (def.min !== undefined && value < def.min) return fail(`must be at least ${def.min}`);
      if (def.max !== undefined && value > def.max) return fail(`must be at most ${def.max}`);
      return value;
    case 'string':
      if (typeof value !== 'string') return fail('must be a string');
      if (def.maxLength !== undefined && value.length > def.maxLength) return fail(`must be at most ${def.maxLength} characters`);
      if (def.pattern && !def.pattern.test(value)) return fail(`must be ${def.patternHint ?? 'well formed'}`);
      return value;
    case 'enum':
      if (typeof value !== 'string' || !def.options.includes(value)) return fail(`must be one of ${def.options.join(', ')}`);
      return value;
    case 'json': {
      const why = def.validate?.(value);
      if (why) return fail(why);
      return value;
    }
  }
}

/** Stored text to value; a stored value that no longer validates falls back to the default. */
export function decodeSettingValue(def: SettingDefinition, stored: string | null): unknown {
  if (stored === null) return def.default;
  try {
    const parsed = def.type === 'string' || def.type === 'enum' ? stored : JSON.parse(stored);
    return validateSettingValue(def, parsed);
  } catch {
    return def.default;
  }
}

export function encodeSettingValue(def: SettingDefinition, value: unknown): string {
  return def.type === 'string' || def.type === 'enum' ? String(value) : JSON.stringify(value);
}
