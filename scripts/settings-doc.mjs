#!/usr/bin/env node
// Writes docs/settings.md: every setting, the core's and each plugin's, with its type, default and meaning,
// from the definitions the server itself uses. Run after `npm run build` (it reads dist/):
//   node scripts/settings-doc.mjs          writes docs/settings.md
//   node scripts/settings-doc.mjs --check  exits 1 when docs/settings.md is not what it would write
// test/unit/settings-doc.test.ts renders the same page from src/ and compares.
import { readFileSync, readdirSync, writeFileSync, existsSync } from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';

/** Text fixes for the page: references to design notes that are not in the repository go; a few get a link. */
const LINKS = [
  [/\s*\((?:DESIGN|SPEC|ARCHITECTURE) \d+\)/g, ''],
  [/\((?:DESIGN|SPEC) \d+; ([^)]*)\)/g, '($1)'],
  [/\(shape in the README\)/g, '(shape in [App navigation](api/authentication.md#app-navigation))'],
];

function cell(text) {
  let t = String(text);
  for (const [re, to] of LINKS) t = t.replace(re, to);
  return t.replace(/\|/g, '\\|').replace(/\n/g, ' ');
}

function typeOf(def) {
  switch (def.type) {
    case 'integer': {
      const max = def.max === undefined || def.max === Number.MAX_SAFE_INTEGER ? '' : String(def.max);
      const min = def.min ?? 0;
      return max ? `integer ${min} to ${max}` : `integer ≥ ${min}`;
    }
    case 'enum':
      return `one of ${def.options.map((o) => `\`${o}\``).join(', ')}`;
    case 'string':
      return def.maxLength ? `text (≤ ${def.maxLength})` : 'text';
    default:
      return def.type;
  }
}

function defaultOf(def) {
  if (def.type === 'string') return def.default === '' ? '(empty)' : `\`${def.default}\``;
  return `\`${JSON.stringify(def.default)}\``;
}

function table(defs) {
  const rows = defs.map((d) => `| \`${d.name}\` | ${typeOf(d)}${d.secret ? ', secret' : ''} | ${defaultOf(d)} | ${cell(d.description)} |`);
  return ['| setting | type | default | meaning |', '|---|---|---|---|', ...rows].join('\n');
}

/**
 * The page. core: the core definitions in their order; plugins: [{name, settings}] in name order.
 * @param {Array<object>} core
 * @param {Array<{name: string, settings: Array<object>}>} plugins
 */
export function renderSettingsDoc(core, allPlugins) {
  const plugins = allPlugins.filter((p) => p.settings.length > 0);
  const without = allPlugins.filter((p) => p.settings.length === 0).map((p) => `\`${p.name}\``);
  const parts = [
    '# Settings',
    '',
    '<!-- Written by scripts/settings-doc.mjs from src/settings/definitions.ts and the plugins\' definitions: do not edit by hand. -->',
    '',
    'Everything that is not an [environment variable](operator-guide.md#environment) is a setting stored in the',
    'database. Read and change them on `/admin/settings` or with the CLI; a running server picks a change up within',
    'a second:',
    '',
    '```sh',
    'npx gatehouse setting get site_name',
    'npx gatehouse setting set site_name "Ada\'s Workshop"',
    '```',
    '',
    'The value is JSON when it parses as JSON, otherwise text. Unknown names and ill-typed values exit 2. Secret',
    'settings print as `"(set)"`, never their value, and are never exported. Windows are in seconds. A plugin\'s',
    `settings can be set whether the plugin is enabled or not${without.length ? ` (${without.join(' and ')} ${without.length === 1 ? 'has' : 'have'} none)` : ''}.`,
    '',
    `- [Core](#core) (${core.length})`,
    ...plugins.map((p) => `- [Plugin \`${p.name}\`](#plugin-${p.name.replace(/[^a-z0-9_-]/g, '')}) (${p.settings.length})`),
    '',
    '## Core',
    '',
    table(core),
  ];
  for (const p of plugins) parts.push('', `## Plugin \`${p.name}\``, '', table(p.settings));
  return parts.join('\n') + '\n';
}

const root = path.resolve(path.dirname(new URL(import.meta.url).pathname), '..');
export const SETTINGS_DOC = path.join(root, 'docs', 'settings.md');

async function main() {
  const dist = path.join(root, 'dist');
  if (!existsSync(path.join(dist, 'settings', 'definitions.js'))) {
    console.error('settings-doc: dist/ is missing: run `npm run build` first');
    process.exit(2);
  }
  const { settingDefinitions } = await import(pathToFileURL(path.join(dist, 'settings', 'definitions.js')).href);
  const plugins = [];
  for (const name of readdirSync(path.join(root, 'plugins')).sort()) {
    const entry = path.join(dist, 'plugins', name, 'index.js');
    if (!existsSync(entry)) continue;
    const mod = (await import(pathToFileURL(entry).href)).default;
    plugins.push({ name, settings: mod.settings ?? [] });
  }
  const text = renderSettingsDoc(settingDefinitions, plugins);
  if (process.argv.includes('--check')) {
    const same = existsSync(SETTINGS_DOC) && readFileSync(SETTINGS_DOC, 'utf8') === text;
    console.log(same ? 'docs/settings.md is up to date' : 'docs/settings.md is stale: run node scripts/settings-doc.mjs');
    process.exit(same ? 0 : 1);
  }
  writeFileSync(SETTINGS_DOC, text);
  console.log(`docs/settings.md: ${settingDefinitions.length} core settings, ${plugins.map((p) => `${p.settings.length} ${p.name}`).join(', ')}`);
}

if (process.argv[1] && pathToFileURL(path.resolve(process.argv[1])).href === import.meta.url) await main();
