import { parseCommandArgs, type CommandGroup } from './context.js';
import { USAGE } from './usage.js';

export const migrateCommand: CommandGroup = {
  async run(args, ctx) {
    parseCommandArgs(args, {}, { min: 0, max: 0, usage: USAGE.migrate[0] });
    return ctx.withServices(async (_services, applied) => ({ applied }));
  },
};
