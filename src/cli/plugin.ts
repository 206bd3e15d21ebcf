import { CliUsageError, parseCommandArgs, type CommandGroup } from './context.js';

const LIST = 'gatehouse plugin list';
const ENABLE = 'gatehouse plugin enable NAME';
const DISABLE = 'gatehouse plugin disable NAME';

export const pluginCommand: CommandGroup = {
  usage: [LIST, ENABLE, DISABLE],
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
    throw new CliUsageError(`usage: ${LIST}\n       ${ENABLE}\n       ${DISABLE}`);
  },
};
