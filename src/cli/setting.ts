import type { SettingDefinition } from '../settings/definitions.js';
import { SettingError, settingDefinition, validateSettingValue } from '../settings/registry.js';
import { USAGE, groupUsage } from './usage.js';
import { CliUsageError, parseCommandArgs, type CliContext, type CommandGroup } from './context.js';

const [GET, SET] = USAGE.setting;
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

export const settingCommand: CommandGroup = {
  async run(args, ctx) {
    const [sub, ...rest] = args;
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
