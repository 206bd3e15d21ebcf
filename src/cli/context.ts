import { parseArgs, type ParseArgsConfig } from 'node:util';
import type { Config } from '../config.js';
import type { Services } from '../services.js';

export interface CliIo {
  stdout(text: string): void;
  stderr(text: string): void;
  env: NodeJS.ProcessEnv;
}

/** Bad input from the operator: the message goes to stderr and the exit code is 2. */
export class CliUsageError extends Error {}

/** The outcome of a command that runs to its own end (`serve`) instead of printing a result. */
export class Exited {
  constructor(readonly code: number) {}
}

/** The one JSON object a command prints on stdout (exit 0), or how a long-running command ended. */
export type CommandOutput = Record<string, unknown> | Exited;

export interface CliContext {
  config: Config;
  io: CliIo;
  /**
   * Opens the database the way DESIGN §3 says (telling the operator on stderr which one), applies
   * migrations, and runs fn with the services. An empty DATA_DIR is refused unless `mayCreate`.
   */
  withServices<T>(fn: (services: Services, applied: string[]) => Promise<T>, opts?: { mayCreate?: boolean }): Promise<T>;
  /** Makes the plugins' settings, models and actions known (their modules load on first use). */
  loadPlugins(): Promise<void>;
}

/** One command group (`user`, `key`, ...): how it runs its arguments. */
export interface CommandGroup {
  run(args: string[], ctx: CliContext): Promise<CommandOutput>;
}

type Options = NonNullable<ParseArgsConfig['options']>;

/** node:util parseArgs with strict checking; its complaints become usage errors. */
export function parseCommandArgs<O extends Options>(args: string[], options: O, positionals: { min: number; max: number; usage: string }) {
  let parsed;
  try {
    parsed = parseArgs({ args, options, strict: true, allowPositionals: true });
  } catch (e) {
    throw new CliUsageError(`${e instanceof Error ? e.message : String(e)}\nusage: ${positionals.usage}`);
  }
  if (parsed.positionals.length < positionals.min || parsed.positionals.length > positionals.max) {
    throw new CliUsageError(`usage: ${positionals.usage}`);
  }
  return parsed;
}

export function requireOption(value: string | undefined, flag: string, usage: string): string {
  if (value === undefined || value === '') throw new CliUsageError(`${flag} is required\nusage: ${usage}`);
  return value;
}

export function parseIntOption(value: string, flag: string): number {
  if (!/^-?\d+$/.test(value.trim())) throw new CliUsageError(`${flag} must be an integer, got '${value}'`);
  return Number(value.trim());
}
