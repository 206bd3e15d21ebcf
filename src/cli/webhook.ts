import { isApiError } from '../http/errors.js';
import { parseTimestamp } from '../lib/time.js';
import { createEndpoint, listEndpoints, redeliver } from '../outbound/webhooks/endpoints.js';
import { CliUsageError, parseCommandArgs, parseIntOption, requireOption, type CommandGroup } from './context.js';
import { USAGE, groupUsage } from './usage.js';

const [LIST, CREATE, REDELIVER] = USAGE.webhook;

/** A refusal of the endpoint rules (a private URL, an unknown event type, no such event) is bad input: exit 2. */
async function asCliInput<T>(usage: string, work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (e) {
    if (!isApiError(e)) throw e;
    const fields = Object.entries(e.validationErrors ?? {}).map(([k, v]) => `--${k.replace(/_/g, '-')} ${v}`);
    throw new CliUsageError(`${fields.length ? fields.join('; ') : e.message}\nusage: ${usage}`);
  }
}

/** `gatehouse webhook list | create --url U [...] | redeliver --event-id ID | --endpoint-id N --since T` (DESIGN 15). */
export const webhookCommand: CommandGroup = {
  async run(args, ctx) {
    const [sub, ...rest] = args;
    if (sub === 'list') {
      parseCommandArgs(rest, {}, { min: 0, max: 0, usage: LIST });
      return ctx.withServices(async ({ db }) => ({ endpoints: await listEndpoints(db) }));
    }
    if (sub === 'create') {
      const { values } = parseCommandArgs(rest, { url: { type: 'string' }, description: { type: 'string' }, 'event-type': { type: 'string', multiple: true }, disabled: { type: 'boolean' } }, { min: 0, max: 0, usage: CREATE });
      const url = requireOption(values.url, '--url', CREATE);
      return ctx.withServices(({ db, clock, settings }) =>
        asCliInput(CREATE, async () => {
          const { endpoint, secret } = await createEndpoint({ db, clock, settings }, { url, description: values.description ?? '', event_types: values['event-type'] ?? [], enabled: !values.disabled });
          return { ...endpoint, secret };
        }),
      );
    }
    if (sub === 'redeliver') {
      const { values } = parseCommandArgs(rest, { 'event-id': { type: 'string' }, 'endpoint-id': { type: 'string' }, since: { type: 'string' } }, { min: 0, max: 0, usage: REDELIVER });
      const endpointId = values['endpoint-id'] !== undefined ? parseIntOption(values['endpoint-id'], '--endpoint-id') : null;
      const since = values.since !== undefined ? parseTimestamp(values.since) : null;
      if (values.since !== undefined && !since) throw new CliUsageError(`--since must be a UTC time as 'YYYY-MM-DD HH:MM:SS', got '${values.since}'\nusage: ${REDELIVER}`);
      if (!values['event-id'] && !(endpointId && since)) throw new CliUsageError(`give --event-id, or --endpoint-id with --since\nusage: ${REDELIVER}`);
      return ctx.withServices(({ db, clock, settings }) => asCliInput(REDELIVER, () => redeliver({ db, clock, settings }, { event_id: values['event-id'] ?? null, endpoint_id: endpointId, since })));
    }
    throw new CliUsageError(groupUsage(USAGE.webhook));
  },
};
