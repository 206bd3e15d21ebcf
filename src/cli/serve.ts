import { serveUntilSignal } from '../server.js';
import { parseCommandArgs, type CommandGroup } from './context.js';

const USAGE = 'gatehouse serve';

export const serveCommand: CommandGroup = {
  usage: [USAGE],
  async run(args, ctx) {
    parseCommandArgs(args, {}, { min: 0, max: 0, usage: USAGE });
    return { exitCode: await serveUntilSignal(ctx.config, (line) => ctx.io.stderr(`${line}\n`)) };
  },
};
