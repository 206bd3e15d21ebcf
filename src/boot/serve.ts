import { serveUntilSignal } from './server.js';
import { Exited, parseCommandArgs, type CommandGroup } from '../cli/context.js';
import { USAGE } from '../cli/usage.js';

export const serveCommand: CommandGroup = {
  async run(args, ctx) {
    const { values } = parseCommandArgs(args, { dev: { type: 'boolean', default: false } }, { min: 0, max: 0, usage: USAGE.serve[0] });
    return new Exited(await serveUntilSignal(ctx.config, (line) => ctx.io.stderr(`${line}\n`), { dev: values.dev === true }));
  },
};
