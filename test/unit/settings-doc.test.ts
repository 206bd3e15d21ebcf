import { readFileSync, readdirSync } from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { describe, expect, it } from 'vitest';
import type { PluginModule } from '../../src/plugin-kit/index.js';
import { settingDefinitions, type SettingDefinition } from '../../src/settings/definitions.js';
import { renderSettingsDoc } from '../../scripts/settings-doc.mjs';

const ROOT = path.resolve(path.dirname(new URL(import.meta.url).pathname), '..', '..');

async function pluginSettings(): Promise<Array<{ name: string; settings: SettingDefinition[] }>> {
  const out: Array<{ name: string; settings: SettingDefinition[] }> = [];
  for (const name of readdirSync(path.join(ROOT, 'plugins')).sort()) {
    const mod = (await import(pathToFileURL(path.join(ROOT, 'src', 'plugins', name, 'index.ts')).href)) as { default: PluginModule };
    out.push({ name, settings: [...(mod.default.settings ?? [])] });
  }
  return out;
}

// docs/settings.md is generated (scripts/settings-doc.mjs); this keeps it in step with the definitions.
describe('docs/settings.md lists every setting', () => {
  it('is exactly what scripts/settings-doc.mjs renders from the current definitions (run it after `npm run build`)', async () => {
    const doc = readFileSync(path.join(ROOT, 'docs', 'settings.md'), 'utf8');
    expect(doc).toBe(renderSettingsDoc(settingDefinitions, await pluginSettings()));
  });

  it('has one row per defined setting, core and plugin, and no row for anything else', async () => {
    const doc = readFileSync(path.join(ROOT, 'docs', 'settings.md'), 'utf8');
    const rows = [...doc.matchAll(/^\| `([a-z0-9_]+)` \|/gm)].map((m) => m[1]);
    const defined = [...settingDefinitions, ...(await pluginSettings()).flatMap((p) => p.settings)].map((d) => d.name);
    expect(rows.length).toBeGreaterThan(80);
    expect([...rows].sort()).toEqual([...defined].sort());
    expect(doc).not.toMatch(/\b(DESIGN|SPEC|ARCHITECTURE) \d/);
  });
});
