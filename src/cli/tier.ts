import { tierAssign, tierAudit, tierList } from '../tiers/cli-commands.js';
import { CliUsageError, parseCommandArgs, requireOption, type CommandGroup } from './context.js';
import { USAGE, groupUsage } from './usage.js';

const [LIST, ASSIGN, AUDIT] = USAGE.tier;

/** `gatehouse tier list | assign --user-id N --tier NAME|none | audit` (DESIGN §3). */
export const tierCommand: CommandGroup = {
  async run(args, ctx) {
    const [sub, ...rest] = args;
    if (sub === 'list') {
      parseCommandArgs(rest, {}, { min: 0, max: 0, usage: LIST });
      return ctx.withServices(({ db }) => tierList(db));
    }
    if (sub === 'assign') {
      const { values } = parseCommandArgs(rest, { 'user-id': { type: 'string' }, tier: { type: 'string' } }, { min: 0, max: 0, usage: ASSIGN });
      const rawUserId = requireOption(values['user-id'], '--user-id', ASSIGN);
      if (!/^[1-9]\d{0,15}$/.test(rawUserId)) throw new CliUsageError(`--user-id must be a positive integer\nusage: ${ASSIGN}`);
      const tier = requireOption(values.tier, '--tier', ASSIGN);
      return ctx.withServices(({ db, clock }) => tierAssign(db, clock, Number(rawUserId), tier));
    }
    if (sub === 'audit') {
      parseCommandArgs(rest, {}, { min: 0, max: 0, usage: AUDIT });
      return ctx.withServices(({ db, tiers }) => tierAudit(db, tiers.registry));
    }
    throw new CliUsageError(groupUsage(USAGE.tier));
  },
};
