import type { SettingDefinition } from '../settings/definitions.js';
import { SettingError, allSettingDefinitions, settingDefinition, settingSource, validateSettingValue } from '../settings/registry.js';
import { USAGE, groupUsage } from './usage.js';
import { CliUsageError, Exited, parseCommandArgs, type CliContext, type CommandGroup } from './context.js';

const [LIST, GET, SET] = USAGE.setting;
/** What a secret setting shows instead of its value: whether it is set, never what it is. */
export const SECRET_SET = '(set)';

/**
 * A core setting, or one an installed plugin declares (its code under src/plugins/{name}). A plugin's
 * settings are known whether or not the plugin is active: an operator configures a plugin before
 * enabling it, and a disabled plugin keeps its settings for when it is turned on again. Plugin modules
 * are loaded only for a name the core does not know, so core settings do not pay for them.
 */
async function definitionOf(name: string, ctx: CliContext): Promise<SettingDefinition> {
  let def = settingDefinition(name);
  if (!def) {
    await ctx.loadPlugins();
    def = settingDefinition(name);
  }
  if (!def) throw new SettingError(`unknown setting ${name}`);
  return def;
}

/**
 * VALUE is JSON when it parses, else the text itself. A text setting keeps the text as typed even when it
 * happens to parse (`site_name 2026`), unless it is a quoted JSON string.
 */
export function parseSettingValue(def: SettingDefinition, raw: string): unknown {
  let parsed: unknown;
  try {
    parsed = JSON.parse(raw);
  } catch {
    return raw;
  }
  if ((def.type === 'string' || def.type === 'enum') && typeof parsed !== 'string') return raw;
  return parsed;
}

function shown(def: SettingDefinition, value: unknown): unknown {
  if (!def.secret) return value;
  return value === '' ? '' : SECRET_SET;
}

export interface SettingListEntry {
  name: string;
  type: SettingDefinition['type'];
  /** The value; a secret's is only 'set' or 'not set'. */
  value: unknown;
  secret: boolean;
  /** 'core', or the plugin that declares it. */
  source: string;
  description: string;
}

/** Longest value the table shows before cutting it (the JSON list has every value whole). */
const VALUE_WIDTH = 40;

function tableValue(e: SettingListEntry): string {
  const text = typeof e.value === 'string' && !e.secret ? (e.value === '' ? '""' : e.value) : typeof e.value === 'string' ? e.value : JSON.stringify(e.value);
  const oneLine = text.replace(/\r?\n/g, '\\n');
  return oneLine.length > VALUE_WIDTH ? `${oneLine.slice(0, VALUE_WIDTH - 1)}…` : oneLine;
}

/** Aligned columns: NAME, TYPE, VALUE, SOURCE, DESCRIPTION (the last one runs to the end of the line). */
export function settingTable(entries: SettingListEntry[]): string {
  const rows = [['NAME', 'TYPE', 'VALUE', 'SOURCE', 'DESCRIPTION'], ...entries.map((e) => [e.name, e.type, tableValue(e), e.source, e.description])];
  const widths = [0, 1, 2, 3].map((i) => Math.max(...rows.map((r) => r[i]!.length)));
  return rows.map((r) => r.map((cell, i) => (i < 4 ? cell.padEnd(widths[i]!) : cell)).join('  ').trimEnd()).join('\n') + '\n';
}

export const settingCommand: CommandGroup = {
  async run(args, ctx) {
    const [sub, ...rest] = args;
    if (sub === 'list') {
      const { values } = parseCommandArgs(rest, { table: { type: 'boolean', default: false } }, { min: 0, max: 0, usage: LIST });
      // Every installed plugin's settings too, active or not (they are configured before enabling).
      await ctx.loadPlugins();
      const entries = await ctx.withServices(async ({ settings }) =>
        allSettingDefinitions().map((def): SettingListEntry => {
          const value = settings.get(def.name);
          return {
            name: def.name,
            type: def.type,
            value: def.secret ? (value === '' || value === null ? 'not set' : 'set') : value,
            secret: def.secret === true,
            source: settingSource(def.name),
            description: def.description,
          };
        }),
      );
      // One JSON object like every command (DESIGN §3); --table is the same list for a person to read.
      if (!values.table) return { settings: entries };
      ctx.io.stdout(settingTable(entries));
      return new Exited(0);
    }
    if (sub === 'get') {
      const { positionals } = parseCommandArgs(rest, {}, { min: 1, max: 1, usage: GET });
      const def = await definitionOf(positionals[0]!, ctx);
      return ctx.withServices(async ({ settings }) => ({ name: def.name, value: shown(def, settings.get(def.name)) }));
    }
    if (sub === 'set') {
      const { positionals } = parseCommandArgs(rest, {}, { min: 2, max: 2, usage: SET });
      const def = await definitionOf(positionals[0]!, ctx);
      const value = validateSettingValue(def, parseSettingValue(def, positionals[1]!));
      return ctx.withServices(async ({ settings }) => ({ name: def.name, value: shown(def, await settings.set(def.name, value)) }));
    }
    throw new CliUsageError(groupUsage(USAGE.setting));
  },
};
