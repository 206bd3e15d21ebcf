import { ApiKeyInputError } from '../accounts/api-keys.js';
import { UserInputError } from '../accounts/users.js';
import { ConfigError, loadConfig } from '../config.js';
import { PluginError } from '../settings/plugins.js';
import { SettingError } from '../settings/registry.js';
import { StoreReplayInputError } from '../store/replay-errors.js';
import { TierInputError } from '../tiers/errors.js';
import { CliUsageError, Exited, type CliIo, type CommandGroup } from '../cli/context.js';
import { USAGE } from '../cli/usage.js';

export type { CliIo } from '../cli/context.js';

/**
 * Every command group of `npx gatehouse` with its usage; `tier` and `backup` join here. Groups load on
 * use, so a command does not pay for the server's modules.
 */
export const commands: Record<string, { usage: readonly string[]; load(): Promise<CommandGroup> }> = {
  serve: { usage: USAGE.serve, load: async () => (await import('./serve.js')).serveCommand },
  migrate: { usage: USAGE.migrate, load: async () => (await import('../cli/migrate.js')).migrateCommand },
  user: { usage: USAGE.user, load: async () => (await import('../cli/user.js')).userCommand },
  member: { usage: USAGE.member, load: async () => (await import('../cli/member.js')).memberCommand },
  key: { usage: USAGE.key, load: async () => (await import('../cli/key.js')).keyCommand },
  setting: { usage: USAGE.setting, load: async () => (await import('../cli/setting.js')).settingCommand },
  plugin: { usage: USAGE.plugin, load: async () => (await import('../cli/plugin.js')).pluginCommand },
  task: { usage: USAGE.task, load: async () => (await import('../cli/task.js')).taskCommand },
  tier: { usage: USAGE.tier, load: async () => (await import('../cli/tier.js')).tierCommand },
  backup: { usage: USAGE.backup, load: async () => (await import('../cli/backup.js')).backupCommand },
  store: { usage: USAGE.store, load: async () => (await import('../cli/store.js')).storeCommand },
  webhook: { usage: USAGE.webhook, load: async () => (await import('../cli/webhook.js')).webhookCommand },
  import: { usage: USAGE.import, load: async () => (await import('../cli/import.js')).importCommand },
  export: { usage: USAGE.export, load: async () => (await import('../cli/export.js')).exportCommand },
};

export const EXIT_OK = 0;
export const EXIT_FAILURE = 1;
export const EXIT_BAD_INPUT = 2;

function usage(): string {
  const lines = Object.values(commands).flatMap((c) => c.usage);
  return `usage:\n${lines.map((l) => `  ${l}`).join('\n')}\n`;
}

/** A plugin's command group (`relay`, `node`, ...), looked up only when no core group has the name. */
async function pluginCommand(name: string): Promise<{ usage: readonly string[]; load(): Promise<CommandGroup> } | undefined> {
  const { pluginModules } = await import('./plugins.js');
  for (const plugin of await pluginModules()) {
    const entry = plugin.cli && Object.hasOwn(plugin.cli, name) ? plugin.cli[name] : undefined;
    if (entry) return { usage: entry.usage, load: async () => entry.group };
  }
  return undefined;
}

async function pluginUsage(): Promise<string> {
  const { pluginModules } = await import('./plugins.js');
  const lines = (await pluginModules()).flatMap((p) => Object.values(p.cli ?? {}).flatMap((c) => c.usage.map((u) => `  ${u}   (plugin ${p.name})`)));
  return lines.length > 0 ? `plugin commands:\n${lines.join('\n')}\n` : '';
}

function isBadInput(e: unknown): boolean {
  return (
    e instanceof CliUsageError ||
    e instanceof UserInputError ||
    e instanceof ApiKeyInputError ||
    e instanceof SettingError ||
    e instanceof PluginError ||
    e instanceof ConfigError ||
    e instanceof TierInputError ||
    e instanceof StoreReplayInputError
  );
}

/**
 * Runs one command: prints one JSON object on stdout and resolves 0; bad input resolves 2 with the
 * reason on stderr; any other failure resolves 1.
 */
export async function runCli(argv: string[], io: CliIo): Promise<number> {
  const [name, ...args] = argv;
  if (name === undefined || name === 'help' || name === '--help' || name === '-h') {
    io[name === undefined ? 'stderr' : 'stdout'](`${usage()}${await pluginUsage()}`);
    return name === undefined ? EXIT_BAD_INPUT : EXIT_OK;
  }
  const command = Object.hasOwn(commands, name) ? commands[name] : await pluginCommand(name);
  if (!command) {
    io.stderr(`gatehouse: unknown command '${name}'\n${usage()}${await pluginUsage()}`);
    return EXIT_BAD_INPUT;
  }
  try {
    const config = loadConfig(io.env);
    const [group, { createCliContext }] = await Promise.all([command.load(), import('./cli-context.js')]);
    const output = await group.run(args, createCliContext(config, io));
    if (output instanceof Exited) return output.code;
    io.stdout(`${JSON.stringify(output)}\n`);
    return EXIT_OK;
  } catch (e) {
    const message = e instanceof Error ? e.message : String(e);
    io.stderr(`gatehouse ${name}: ${message}\n`);
    return isBadInput(e) ? EXIT_BAD_INPUT : EXIT_FAILURE;
  }
}

/** `bin/gatehouse.js`: runs the command line of this process and exits with its code. */
export async function runCliFromProcess(): Promise<never> {
  const code = await runCli(process.argv.slice(2), {
    stdout: (text) => process.stdout.write(text),
    stderr: (text) => process.stderr.write(text),
    env: process.env,
  });
  // Let piped output drain before exiting: an open handle (a pool timer) must not keep the process alive.
  await new Promise<void>((resolve) => process.stdout.write('', () => resolve()));
  process.exit(code);
}
