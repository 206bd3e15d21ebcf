import { CliUsageError, parseCommandArgs, parseIntOption, requireOption, type CommandGroup } from '../../cli/context.js';
import { groupUsage } from '../../cli/usage.js';
import { formatTimestamp } from '../../lib/time.js';
import type { Services } from '../../services.js';
import { requireActivePlugin } from '../../plugin-kit/index.js';
import { queueNodeJob } from './jobs.js';
import { listNodes, NodeInputError, setNodeStatus } from './nodes.js';

export const NODE_USAGE = [
  'gatehouse node list',
  'gatehouse node approve ID',
  'gatehouse node revoke ID',
  'gatehouse node job --node ID|any --kind KIND [--payload JSON]',
] as const;
const [LIST, APPROVE, REVOKE, JOB] = NODE_USAGE;

function nodeIdArg(value: string): number {
  const id = parseIntOption(value, 'ID');
  if (id < 1) throw new CliUsageError('ID must be a positive integer');
  return id;
}

function payloadArg(value: string | undefined): Record<string, unknown> {
  if (value === undefined) return {};
  let payload: unknown;
  try {
    payload = JSON.parse(value);
  } catch {
    throw new CliUsageError('--payload must be JSON');
  }
  if (typeof payload !== 'object' || payload === null || Array.isArray(payload)) throw new CliUsageError('--payload must be a JSON object');
  return payload as Record<string, unknown>;
}

/** Runs fn with the services of an active server_management plugin; its input errors are the operator's. */
async function withPlugin<T>(services: Services, fn: () => Promise<T>): Promise<T> {
  requireActivePlugin(services, 'server_management');
  try {
    return await fn();
  } catch (e) {
    if (e instanceof NodeInputError) throw new CliUsageError(e.message);
    throw e;
  }
}

/** `npx gatehouse node ...`: approve nodes after comparing fingerprints, revoke them, queue their jobs. */
export const nodeCommand: CommandGroup = {
  async run(args, ctx) {
    const [sub, ...rest] = args;
    if (sub === 'list') {
      parseCommandArgs(rest, {}, { min: 0, max: 0, usage: LIST });
      const at = (d: Date | null) => (d ? formatTimestamp(d) : null);
      return ctx.withServices((services) =>
        withPlugin(services, async () => ({
          nodes: (await listNodes(services.db)).map((n) => ({ ...n, approved_time: at(n.approved_time), last_contact_time: at(n.last_contact_time), create_time: at(n.create_time) })),
        })),
      );
    }
    if (sub === 'approve' || sub === 'revoke') {
      const { positionals } = parseCommandArgs(rest, {}, { min: 1, max: 1, usage: sub === 'approve' ? APPROVE : REVOKE });
      const id = nodeIdArg(positionals[0]!);
      return ctx.withServices((services) =>
        withPlugin(services, async () => {
          const node = await setNodeStatus(services.db, id, sub, services.clock.now());
          return { node_id: node.id, claimed_name: node.claimedName, fingerprint: node.fingerprint, status: node.status };
        }),
      );
    }
    if (sub === 'job') {
      const { values } = parseCommandArgs(rest, { node: { type: 'string' }, kind: { type: 'string' }, payload: { type: 'string' } }, { min: 0, max: 0, usage: JOB });
      const nodeValue = requireOption(values.node, '--node', JOB);
      const nodeId = nodeValue === 'any' ? null : nodeIdArg(nodeValue);
      const kind = requireOption(values.kind, '--kind', JOB);
      const payload = payloadArg(values.payload);
      return ctx.withServices((services) =>
        withPlugin(services, async () => ({ job: await queueNodeJob(services.db, { nodeId, kind, payload, now: services.clock.now() }) })),
      );
    }
    throw new CliUsageError(groupUsage(NODE_USAGE));
  },
};
