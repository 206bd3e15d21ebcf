import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { FeatureDefinitionError, FeatureRegistry } from '../../src/tiers/feature-registry.js';

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

/** A project layout in a temp dir: includes/core_tier_features.json and plugins/{name}/tier_features.json. */
function layout(core: unknown, plugins: Record<string, unknown> = {}): { coreFile: string; pluginsDir: string } {
  const root = mkdtempSync(path.join(os.tmpdir(), 'gh-features-'));
  dirs.push(root);
  mkdirSync(path.join(root, 'includes'));
  const coreFile = path.join(root, 'includes', 'core_tier_features.json');
  writeFileSync(coreFile, typeof core === 'string' ? core : JSON.stringify(core));
  const pluginsDir = path.join(root, 'plugins');
  mkdirSync(pluginsDir);
  for (const [name, defs] of Object.entries(plugins)) {
    mkdirSync(path.join(pluginsDir, name));
    writeFileSync(path.join(pluginsDir, name, 'tier_features.json'), typeof defs === 'string' ? defs : JSON.stringify(defs));
  }
  return { coreFile, pluginsDir };
}

const int = (extra: Record<string, unknown> = {}) => ({ type: 'integer', label: 'L', description: 'D', default: 1, ...extra });
const bool = (extra: Record<string, unknown> = {}) => ({ type: 'boolean', label: 'L', description: 'D', default: false, ...extra });
const str = (extra: Record<string, unknown> = {}) => ({ type: 'string', label: 'L', description: 'D', default: 'x', ...extra });

function loadError(core: unknown, plugins: Record<string, unknown> = {}): FeatureDefinitionError {
  const paths = layout(core, plugins);
  try {
    FeatureRegistry.load(paths);
  } catch (e) {
    expect(e).toBeInstanceOf(FeatureDefinitionError);
    return e as FeatureDefinitionError;
  }
  throw new Error('expected the definitions to be refused');
}

describe('tier feature definitions', () => {
  it('ships the four core Drive features unprefixed and the mailbox plugin features prefixed with mailbox_', () => {
    const registry = FeatureRegistry.load();
    expect(registry.keys().sort()).toEqual([
      'drive_max_file_bytes',
      'drive_share_links',
      'drive_storage_bytes',
      'drive_versioning_depth',
      'mailbox_fleet_max_domains',
      'mailbox_fleet_slot',
    ]);
    expect(registry.get('drive_storage_bytes')).toMatchObject({ type: 'integer', default: 0, source: 'core' });
    expect(registry.get('drive_max_file_bytes')).toMatchObject({ type: 'integer', default: 0 });
    expect(registry.get('drive_share_links')).toMatchObject({ type: 'boolean', default: false });
    expect(registry.get('drive_versioning_depth')).toMatchObject({ type: 'integer', default: 0 });
    expect(registry.get('mailbox_fleet_slot')).toMatchObject({ type: 'boolean', source: 'mailbox' });
    expect(registry.get('mailbox_fleet_max_domains')).toMatchObject({ type: 'integer', source: 'mailbox' });
  });

  it('prefixes plugin feature keys with the plugin name and an underscore; core keys are not prefixed', () => {
    const registry = FeatureRegistry.load(layout({ max_devices: int() }, { widgets: { max_devices: int({ default: 3 }) } }));
    expect(registry.keys()).toEqual(['max_devices', 'widgets_max_devices']);
    expect(registry.get('widgets_max_devices')).toMatchObject({ default: 3, source: 'widgets' });
  });

  it('accepts each type with a default of that type, and integer min/max with min <= max', () => {
    const registry = FeatureRegistry.load(layout({ a: int({ min: 0, max: 5, default: 5 }), b: bool(), c: str({ default: '' }), d: int({ min: 2, max: 2, default: 2 }) }));
    expect(registry.get('a')).toMatchObject({ type: 'integer', min: 0, max: 5, default: 5 });
    expect(registry.get('c')).toMatchObject({ type: 'string', default: '' });
  });

  const invalid: Array<[string, unknown, string]> = [
    ['an unknown type', { type: 'float', label: 'L', description: 'D', default: 1 }, 'type must be one of integer, boolean, string'],
    ['a missing label', { type: 'boolean', description: 'D', default: true }, 'label must be a non-empty string'],
    ['a missing description', { type: 'boolean', label: 'L', default: true }, 'description must be a string'],
    ['a missing default', { type: 'boolean', label: 'L', description: 'D' }, 'default is required'],
    ['an integer default that is a string', int({ default: '5' }), 'default must be of type integer'],
    ['an integer default that is a fraction', int({ default: 1.5 }), 'default must be of type integer'],
    ['a boolean default that is a number', bool({ default: 0 }), 'default must be of type boolean'],
    ['a string default that is a boolean', str({ default: true }), 'default must be of type string'],
    ['min greater than max', int({ min: 5, max: 1, default: 3 }), 'min (5) is greater than max (1)'],
    ['a non-integer min', int({ min: 0.5 }), 'min must be an integer'],
    ['min on a boolean', bool({ min: 0 }), 'min is allowed only on integer features'],
    ['a default below min', int({ min: 2, default: 1 }), 'default (1) is below min (2)'],
    ['a default above max', int({ max: 0, default: 1 }), 'default (1) is above max (0)'],
    ['an unknown attribute', int({ maximum: 3 }), "unknown attribute 'maximum'"],
  ];
  for (const [what, entry, problem] of invalid) {
    it(`refuses to start on ${what}, naming the file and the key`, () => {
      const err = loadError({ good: bool(), broken: entry });
      expect(err.file).toMatch(/includes[/\\]core_tier_features\.json$/);
      expect(err.key).toBe('broken');
      expect(err.message).toBe(`${err.file}: feature 'broken': ${problem}`);
    });
  }

  it('names the plugin file and the unprefixed key for an invalid plugin definition', () => {
    const err = loadError({}, { widgets: { max_devices: int({ type: 'number' }) } });
    expect(err.file).toMatch(/plugins[/\\]widgets[/\\]tier_features\.json$/);
    expect(err.message).toBe(`${err.file}: feature 'max_devices': type must be one of integer, boolean, string`);
  });

  it('refuses a definition file that is not JSON, or not an object', () => {
    expect(loadError('{nope').message).toMatch(/core_tier_features\.json: not valid JSON/);
    expect(loadError('[]').message).toMatch(/core_tier_features\.json: must be an object keyed by feature key$/);
  });

  it('refuses a plugin key that collides with a core key once prefixed', () => {
    const err = loadError({ widgets_count: int() }, { widgets: { count: int() } });
    expect(err.message).toMatch(/widgets[/\\]tier_features\.json: feature 'count': key widgets_count is already declared in .*core_tier_features\.json$/);
  });

  describe('values written to sbt_features', () => {
    const registry = FeatureRegistry.load(layout({ n: int({ min: 0, max: 10, default: 0 }), b: bool(), s: str() }));

    it('accepts values of the declared type within bounds', () => {
      expect(registry.validateValues({ n: 10, b: true, s: 'hello' })).toEqual({ ok: true, value: { n: 10, b: true, s: 'hello' } });
      expect(registry.validateValues({})).toEqual({ ok: true, value: {} });
    });

    it('reports each bad key: wrong type, out of bounds, unknown key', () => {
      expect(registry.validateValues({ n: 11, b: 'yes', s: 3, zzz: 1 })).toEqual({
        ok: false,
        errors: { n: 'must be at most 10', b: 'must be a boolean', s: 'must be a string', zzz: 'is not a declared feature' },
      });
      expect(registry.validateValues({ n: -1 })).toEqual({ ok: false, errors: { n: 'must be at least 0' } });
      expect(registry.validateValues({ n: 1.5 })).toEqual({ ok: false, errors: { n: 'must be an integer' } });
      expect(registry.validateValues({ n: '5' })).toEqual({ ok: false, errors: { n: 'must be an integer' } });
    });

    it('refuses a value that is not an object', () => {
      expect(registry.validateValues([1])).toEqual({ ok: false, errors: { sbt_features: 'must be a JSON object mapping feature key to value' } });
      expect(registry.validateValues(null).ok).toBe(false);
    });
  });
});
