import { parseCommandArgs, type CommandGroup } from './context.js';
import { USAGE } from './usage.js';

export const migrateCommand: CommandGroup = {
  async run(args, ctx) {
    parseCommandArgs(args, {}, { min: 0, max: 0, usage: USAGE.migrate[0] });
    // The one command besides `serve` that may create a new embedded database.
    return ctx.withServices(async (_services, applied) => ({ applied }), { mayCreate: true });
  },
};
