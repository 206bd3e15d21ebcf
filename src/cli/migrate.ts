import { parseCommandArgs, type CommandGroup } from './context.js';

const USAGE = 'gatehouse migrate';

export const migrateCommand: CommandGroup = {
  usage: [USAGE],
  async run(args, ctx) {
    parseCommandArgs(args, {}, { min: 0, max: 0, usage: USAGE });
    return ctx.withServices(async (_services, applied) => ({ applied }));
  },
};
