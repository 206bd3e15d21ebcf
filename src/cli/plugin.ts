import { USAGE, groupUsage } from './usage.js';
import { CliUsageError, parseCommandArgs, type CommandGroup } from './context.js';

const [LIST, ENABLE, DISABLE] = USAGE.plugin;

export const pluginCommand: CommandGroup = {
  async run(args, ctx) {
    const [sub, ...rest] = args;
    if (sub === 'list') {
      parseCommandArgs(rest, {}, { min: 0, max: 0, usage: LIST });
      return ctx.withServices(async ({ plugins }) => ({ plugins: plugins.list() }));
    }
    if (sub === 'enable' || sub === 'disable') {
      const { positionals } = parseCommandArgs(rest, {}, { min: 1, max: 1, usage: sub === 'enable' ? ENABLE : DISABLE });
      const name = positionals[0]!;
      const active = sub === 'enable';
      return ctx.withServices(async ({ plugins }) => {
        await plugins.setActive(name, active);
        return { name, active };
      });
    }
    throw new CliUsageError(groupUsage(USAGE.plugin));
  },
};
