import { serveUntilSignal } from '../server.js';
import { parseCommandArgs, type CommandGroup } from './context.js';
import { USAGE } from './usage.js';

export const serveCommand: CommandGroup = {
  async run(args, ctx) {
    parseCommandArgs(args, {}, { min: 0, max: 0, usage: USAGE.serve[0] });
    return { exitCode: await serveUntilSignal(ctx.config, (line) => ctx.io.stderr(`${line}\n`)) };
  },
};
