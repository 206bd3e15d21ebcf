import { ApiKeyInputError } from '../accounts/api-keys.js';
import { UserInputError } from '../accounts/users.js';
import { ConfigError, loadConfig } from '../config.js';
import { PluginError } from '../plugins/registry.js';
import { SettingError } from '../settings/registry.js';
import { CliUsageError, createCliContext, type CliIo, type CommandGroup } from './context.js';
import { keyCommand } from './key.js';
import { migrateCommand } from './migrate.js';
import { pluginCommand } from './plugin.js';
import { serveCommand } from './serve.js';
import { settingCommand } from './setting.js';
import { taskCommand } from './task.js';
import { userCommand } from './user.js';

export type { CliIo } from './context.js';

/** Every command group of `npx gatehouse`; `tier` and `backup` join here. */
export const commands: Record<string, CommandGroup> = {
  serve: serveCommand,
  migrate: migrateCommand,
  user: userCommand,
  key: keyCommand,
  setting: settingCommand,
  plugin: pluginCommand,
  task: taskCommand,
};

export const EXIT_OK = 0;
export const EXIT_FAILURE = 1;
export const EXIT_BAD_INPUT = 2;

function usage(): string {
  const lines = Object.values(commands).flatMap((c) => c.usage);
  return `usage:\n${lines.map((l) => `  ${l}`).join('\n')}\n`;
}

function isBadInput(e: unknown): boolean {
  return (
    e instanceof CliUsageError ||
    e instanceof UserInputError ||
    e instanceof ApiKeyInputError ||
    e instanceof SettingError ||
    e instanceof PluginError ||
    e instanceof ConfigError
  );
}

/**
 * Runs one command: prints one JSON object on stdout and resolves 0; bad input resolves 2 with the
 * reason on stderr; any other failure resolves 1.
 */
export async function runCli(argv: string[], io: CliIo): Promise<number> {
  const [name, ...args] = argv;
  if (name === undefined || name === 'help' || name === '--help' || name === '-h') {
    io[name === undefined ? 'stderr' : 'stdout'](usage());
    return name === undefined ? EXIT_BAD_INPUT : EXIT_OK;
  }
  const command = Object.hasOwn(commands, name) ? commands[name] : undefined;
  if (!command) {
    io.stderr(`gatehouse: unknown command '${name}'\n${usage()}`);
    return EXIT_BAD_INPUT;
  }
  try {
    const ctx = createCliContext(loadConfig(io.env), io);
    const output = await command.run(args, ctx);
    if ('exitCode' in output && typeof output.exitCode === 'number') return output.exitCode;
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
