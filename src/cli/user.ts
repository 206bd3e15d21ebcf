import { createUser } from '../accounts/users.js';
import { USAGE } from './usage.js';
import { CliUsageError, parseCommandArgs, parseIntOption, requireOption, type CommandGroup } from './context.js';

const [CREATE] = USAGE.user;

export const userCommand: CommandGroup = {
  async run(args, ctx) {
    const [sub, ...rest] = args;
    if (sub !== 'create') throw new CliUsageError(`usage: ${CREATE}`);
    const { values } = parseCommandArgs(
      rest,
      {
        email: { type: 'string' },
        password: { type: 'string' },
        permission: { type: 'string' },
        'first-name': { type: 'string' },
        'last-name': { type: 'string' },
      },
      { min: 0, max: 0, usage: CREATE },
    );
    const email = requireOption(values.email, '--email', CREATE);
    const password = requireOption(values.password, '--password', CREATE);
    const permission = values.permission === undefined ? 0 : parseIntOption(values.permission, '--permission');
    return ctx.withServices(async ({ db, clock }) => {
      const userId = await createUser(db, {
        email,
        password,
        permission,
        ...(values['first-name'] !== undefined ? { firstName: values['first-name'] } : {}),
        lastName: values['last-name'] ?? null,
        now: clock.now(),
      });
      return { user_id: userId };
    });
  },
};
