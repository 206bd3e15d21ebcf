import { CliUsageError, parseCommandArgs, requireOption, type CommandGroup } from './context.js';
import { USAGE, groupUsage } from './usage.js';

const [UNRESOLVED, REPLAY] = USAGE.store;

/**
 * `gatehouse store unresolved | replay --event-id ID [--source SOURCE]` (DESIGN 13): the verified store
 * events kept as not applied, and applying one of them once the operator has fixed its cause.
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
    throw new CliUsageError(groupUsage(USAGE.store));
  },
};
