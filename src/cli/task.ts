import { USAGE } from './usage.js';
import { CliUsageError, parseCommandArgs, type CommandGroup } from './context.js';

const [RUN] = USAGE.task;

export const taskCommand: CommandGroup = {
  async run(args, ctx) {
    const [sub, ...rest] = args;
    if (sub !== 'run') throw new CliUsageError(`usage: ${RUN}`);
    const { positionals } = parseCommandArgs(rest, {}, { min: 1, max: 1, usage: RUN });
    const name = positionals[0]!;
    return ctx.withServices(async ({ scheduler }) => {
      if (name !== 'all' && !scheduler.find(name)) {
        throw new CliUsageError(`unknown task ${name}; tasks: ${scheduler.tasks.map((t) => t.name).join(', ')}`);
      }
      const ran = await scheduler.runNow(name);
      const failed = ran.filter((o) => 'error' in o);
      if (failed.length > 0) throw new Error(`task failed: ${failed.map((o) => `${o.task}: ${'error' in o ? o.error : ''}`).join('; ')}`);
      return { ran };
    });
  },
};
