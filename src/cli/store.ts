import { BILLING_SOURCES, type BillingSource } from '../tiers/membership.js';
import { CliUsageError, parseCommandArgs, parseIntOption, requireOption, type CommandGroup } from './context.js';
import { USAGE, groupUsage } from './usage.js';

const [UNRESOLVED, REPLAY, RECONCILE] = USAGE.store;

/**
 * `gatehouse store unresolved | replay --event-id ID [--source SOURCE]` (DESIGN 13): the verified store
 * events kept as not applied, and applying one of them once the operator has fixed its cause.
 * `gatehouse store reconcile [--user-id N] [--source S] [--dry-run]` (DESIGN 14): each live or recently
 * ended subscription read from its provider, and the differences repaired (the provider's state wins).
 */
export const storeCommand: CommandGroup = {
  async run(args, ctx) {
    const [sub, ...rest] = args;
    if (sub === 'unresolved') {
      parseCommandArgs(rest, {}, { min: 0, max: 0, usage: UNRESOLVED });
      const { listUnresolvedEvents } = await import('../store/unresolved.js');
      return ctx.withServices(async ({ db }) => {
        const { total, events } = await listUnresolvedEvents(db);
        return { count: events.length, total, events };
      });
    }
    if (sub === 'replay') {
      const { values } = parseCommandArgs(rest, { 'event-id': { type: 'string' }, source: { type: 'string' } }, { min: 0, max: 0, usage: REPLAY });
      const eventId = requireOption(values['event-id'], '--event-id', REPLAY);
      if (eventId.length > 255) throw new CliUsageError(`--event-id is longer than 255 characters\nusage: ${REPLAY}`);
      if (values.source !== undefined && values.source === '') throw new CliUsageError(`--source is empty\nusage: ${REPLAY}`);
      const { replayStoreEvent } = await import('../store/unresolved.js');
      return ctx.withServices(({ store, tiers }) =>
        replayStoreEvent(store.context(), { active: store.active(), membership: tiers.membership, eventId, source: values.source ?? null }),
      );
    }
    if (sub === 'reconcile') {
      const { values } = parseCommandArgs(
        rest,
        { 'user-id': { type: 'string' }, source: { type: 'string' }, 'dry-run': { type: 'boolean', default: false } },
        { min: 0, max: 0, usage: RECONCILE },
      );
      const userId = values['user-id'] === undefined ? null : parseIntOption(values['user-id'], '--user-id');
      if (userId !== null && userId < 1) throw new CliUsageError(`--user-id must be a positive integer\nusage: ${RECONCILE}`);
      const source = values.source ?? null;
      if (source !== null && !BILLING_SOURCES.includes(source as BillingSource)) {
        throw new CliUsageError(`Unknown source '${source}' (one of ${BILLING_SOURCES.join(', ')})\nusage: ${RECONCILE}`);
      }
      const { reconcileSubscriptions } = await import('../store/reconcile/reconcile.js');
      return ctx.withServices(async ({ store, tiers }) => {
        if (!store.active()) throw new Error('The store is inactive (it opens with products_active and subscriptions_active on and a billing source configured): no billing code runs');
        const report = await reconcileSubscriptions(store.context(), tiers.membership, { userId, source: source as BillingSource | null, dryRun: values['dry-run'] });
        return { ...report };
      });
    }
    throw new CliUsageError(groupUsage(USAGE.store));
  },
};
