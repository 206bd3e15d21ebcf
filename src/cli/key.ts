import { createMachineKey, revokeKey } from '../accounts/api-keys.js';
import { parseTimestamp } from '../lib/time.js';
import { USAGE, groupUsage } from './usage.js';
import { CliUsageError, parseCommandArgs, parseIntOption, requireOption, type CommandGroup } from './context.js';

const [CREATE, REVOKE] = USAGE.key;

function timestampOption(value: string | undefined, flag: string): Date | null {
  if (value === undefined) return null;
  const at = parseTimestamp(value);
  if (!at) throw new CliUsageError(`${flag} must be a UTC time as 'YYYY-MM-DD HH:MM:SS', got '${value}'`);
  return at;
}

export const keyCommand: CommandGroup = {
  async run(args, ctx) {
    const [sub, ...rest] = args;
    if (sub === 'create') {
      const { values } = parseCommandArgs(
        rest,
        {
          'user-id': { type: 'string' },
          permission: { type: 'string' },
          'ip-restriction': { type: 'string' },
          'start-time': { type: 'string' },
          'expires-time': { type: 'string' },
          name: { type: 'string' },
          inactive: { type: 'boolean' },
        },
        { min: 0, max: 0, usage: CREATE },
      );
      const userId = parseIntOption(requireOption(values['user-id'], '--user-id', CREATE), '--user-id');
      const permission = parseIntOption(requireOption(values.permission, '--permission', CREATE), '--permission');
      const startTime = timestampOption(values['start-time'], '--start-time');
      const expiresTime = timestampOption(values['expires-time'], '--expires-time');
      return ctx.withServices(async ({ db, clock }) => {
        const user = await db
          .selectFrom('usr_users')
          .select('usr_user_id')
          .where('usr_user_id', '=', userId)
          .where('usr_delete_time', 'is', null)
          .executeTakeFirst();
        if (!user) throw new CliUsageError(`no user with id ${userId}`);
        const key = await createMachineKey(db, {
          userId,
          permission,
          name: values.name ?? null,
          ipRestriction: values['ip-restriction'] ?? null,
          startTime,
          expiresTime,
          active: !values.inactive,
          now: clock.now(),
        });
        return { api_key_id: key.apiKeyId, public_key: key.publicKey, secret_key: key.secretKey };
      });
    }
    if (sub === 'revoke') {
      const { values } = parseCommandArgs(rest, { 'api-key-id': { type: 'string' } }, { min: 0, max: 0, usage: REVOKE });
      const apiKeyId = parseIntOption(requireOption(values['api-key-id'], '--api-key-id', REVOKE), '--api-key-id');
      return ctx.withServices(async ({ db, clock }) => {
        if (!(await revokeKey(db, apiKeyId, clock.now()))) throw new CliUsageError(`no live API key with id ${apiKeyId} (unknown or already revoked)`);
        return { revoked: true };
      });
    }
    throw new CliUsageError(groupUsage(USAGE.key));
  },
};
