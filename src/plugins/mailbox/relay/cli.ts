import path from 'node:path';
import { CliUsageError, parseCommandArgs, requireOption, type CommandGroup } from '../../../cli/context.js';
import { groupUsage } from '../../../cli/usage.js';
import { formatTimestamp } from '../../../lib/time.js';
import { requireActivePlugin } from '../../../plugin-kit/index.js';
import { RelayBundleError, createRelayRun, inspectBundle } from './runs.js';

export const RELAY_USAGE = ['gatehouse relay run create --bundle FILE'] as const;
const [CREATE] = RELAY_USAGE;

/**
 * `npx gatehouse relay run create --bundle FILE` (DESIGN 11): the operator, who holds the server, is the
 * superadmin creating the run. Prints the run id, the run token (shown only here; only its SHA-256 is
 * stored) and the bundle's SHA-256, which the relay passes as ?sha256= when it fetches the bundle.
 */
export const relayCommand: CommandGroup = {
  async run(args, ctx) {
    const [noun, verb, ...rest] = args;
    if (noun !== 'run' || verb !== 'create') throw new CliUsageError(groupUsage(RELAY_USAGE));
    const { values } = parseCommandArgs(rest, { bundle: { type: 'string' } }, { min: 0, max: 0, usage: CREATE });
    const file = path.resolve(requireOption(values.bundle, '--bundle', CREATE));
    const badInput = (e: unknown) => (e instanceof RelayBundleError ? new CliUsageError(e.message) : e);
    // Refused before the database opens: an unreadable or non-gzip file is the operator's to fix.
    await inspectBundle(file).catch((e: unknown) => {
      throw badInput(e);
    });
    return ctx.withServices(async (services) => {
      requireActivePlugin(services, 'mailbox');
      const run = await createRelayRun(services.db, services.driveStorage.blobs, services.clock, {
        file,
        tokenHours: services.settings.int('mailbox_relay_run_token_hours'),
      }).catch((e: unknown) => {
        throw badInput(e);
      });
      return {
        run_id: run.runId,
        run_token: run.runToken,
        bundle_sha256: run.bundleSha256,
        bundle_size_bytes: run.bundleSizeBytes,
        expires_time: formatTimestamp(run.expiresTime),
      };
    });
  },
};
