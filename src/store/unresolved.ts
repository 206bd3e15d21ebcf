import type { Kysely } from 'kysely';
import type { DB, UnresolvedReason } from '../db/types.js';
import { formatTimestamp } from '../lib/time.js';
import type { TierMembershipService } from '../tiers/membership.js';
import type { StoreContext } from './events.js';
import type { EventOutcome } from './processor.js';
import { StoreReplayError, StoreReplayInputError } from './replay-errors.js';
import { UNRESOLVED_MESSAGES, WEBHOOK_ADAPTERS, applyDelivery } from './webhooks/receive.js';

/**
 * Verified store events kept as not applied (DESIGN 13): a purchase whose user or product could not be
 * resolved, or any event the store acts on that arrived while it was inactive. They are listed for the
 * operator and applied once by a replay, through the same processor, when the cause is fixed.
 */

export const UNRESOLVED_LIMIT = 200;


/** Rolls a replay's transaction back when the event is still unresolved. */
class StillUnresolved extends Error {
  constructor(readonly reason: UnresolvedReason) {
    super(reason);
  }
}

/** The events not applied yet, oldest first (the order to replay them in), with how many there are in all. */
export async function listUnresolvedEvents(db: Kysely<DB>, limit = UNRESOLVED_LIMIT) {
  const open = db.selectFrom('wbh_webhook_logs').where('wbh_unresolved_reason', 'is not', null).where('wbh_replay_time', 'is', null);
  const [rows, total] = await Promise.all([
    open
      .select(['wbh_webhook_log_id', 'wbh_provider', 'wbh_event_id', 'wbh_event_type', 'wbh_unresolved_reason', 'wbh_event_time', 'wbh_create_time'])
      .orderBy('wbh_create_time')
      .orderBy('wbh_webhook_log_id')
      .limit(limit)
      .execute(),
    open.select((eb) => eb.fn.countAll<string>().as('n')).executeTakeFirstOrThrow(),
  ]);
  return {
    total: Number(total.n),
    events: rows.map((r) => ({
      webhook_log_id: Number(r.wbh_webhook_log_id),
      source: r.wbh_provider,
      event_id: r.wbh_event_id,
      event_type: r.wbh_event_type,
      reason: r.wbh_unresolved_reason as UnresolvedReason,
      event_time: r.wbh_event_time ? formatTimestamp(r.wbh_event_time) : null,
      received_time: formatTimestamp(r.wbh_create_time),
    })),
  };
}

export type ReplayResult = {
  event_id: string;
  source: string;
  event_type: string;
  replayed: true;
  outcomes: EventOutcome[];
};

/** The one kept event the operator named (by provider event id, and source when two sources share the id). */
async function findKeptEvent(db: Kysely<DB>, eventId: string, source: string | null) {
  const rows = await db
    .selectFrom('wbh_webhook_logs')
    .select(['wbh_webhook_log_id', 'wbh_provider', 'wbh_unresolved_reason', 'wbh_replay_time'])
    .where('wbh_event_id', '=', eventId)
    .$if(source !== null, (q) => q.where('wbh_provider', '=', source!))
    .execute();
  if (rows.length === 0) throw new StoreReplayInputError(`No store event '${eventId}'${source ? ` from ${source}` : ''}`);
  if (rows.length > 1) {
    throw new StoreReplayInputError(`Event id '${eventId}' was received from ${rows.map((r) => r.wbh_provider).sort().join(' and ')}: name one with --source`);
  }
  const row = rows[0]!;
  if (row.wbh_unresolved_reason === null) throw new StoreReplayInputError(`Event '${eventId}' was applied when it arrived; there is nothing to replay`);
  if (row.wbh_replay_time !== null) throw new StoreReplayInputError(`Event '${eventId}' was already replayed at ${formatTimestamp(row.wbh_replay_time)}`);
  return { id: Number(row.wbh_webhook_log_id), source: row.wbh_provider };
}

/**
 * Applies a kept event once: its delivery is restored from the log row (its signature was verified when
 * it arrived), normalised again (asking the provider where the source does) and applied through the
 * processor in one transaction with the log row, which records the replay time. An event still
 * unresolved applies nothing, keeps its (updated) reason and stays listed.
 */
export async function replayStoreEvent(
  ctx: StoreContext,
  o: { active: boolean; membership: TierMembershipService; eventId: string; source?: string | null },
): Promise<ReplayResult> {
  const source = o.source ?? null;
  if (source !== null && !Object.hasOwn(WEBHOOK_ADAPTERS, source)) {
    throw new StoreReplayInputError(`Unknown source '${source}' (one of ${Object.keys(WEBHOOK_ADAPTERS).join(', ')})`);
  }
  const kept = await findKeptEvent(ctx.db, o.eventId, source);
  if (!o.active) throw new StoreReplayError('The store is inactive (it opens with products_active and subscriptions_active on and a billing source configured): nothing can be applied');
  const adapter = WEBHOOK_ADAPTERS[kept.source];
  if (!adapter) throw new StoreReplayInputError(`Event '${o.eventId}' came from '${kept.source}', which no longer has a webhook`);
  const row = await ctx.db
    .selectFrom('wbh_webhook_logs')
    .select(['wbh_event_id', 'wbh_event_type', 'wbh_event_time', 'wbh_create_time', 'wbh_payload'])
    .where('wbh_webhook_log_id', '=', kept.id)
    .executeTakeFirstOrThrow();
  const payload = typeof row.wbh_payload === 'string' ? JSON.parse(row.wbh_payload) : row.wbh_payload;
  const delivery = adapter.restore({ eventId: row.wbh_event_id, eventType: row.wbh_event_type ?? '', eventTime: row.wbh_event_time ?? row.wbh_create_time, payload }, ctx);
  const events = await delivery.normalise(ctx);

  let outcomes: EventOutcome[];
  try {
    outcomes = await ctx.db.transaction().execute(async (trx) => {
      // A concurrent replay of the same event waits here, then finds it replayed.
      const locked = await trx.selectFrom('wbh_webhook_logs').select('wbh_replay_time').where('wbh_webhook_log_id', '=', kept.id).forUpdate().executeTakeFirstOrThrow();
      if (locked.wbh_replay_time !== null) throw new StoreReplayInputError(`Event '${o.eventId}' was already replayed at ${formatTimestamp(locked.wbh_replay_time)}`);
      const applied = await applyDelivery(trx, ctx, o.membership, kept.id, events);
      // Still unresolved: nothing it did is kept.
      if (applied.unresolved) throw new StillUnresolved(applied.unresolved);
      const now = ctx.clock.now();
      await trx
        .updateTable('wbh_webhook_logs')
        .set({ wbh_replay_time: now, wbh_error_message: null, wbh_update_time: now })
        .where('wbh_webhook_log_id', '=', kept.id)
        .execute();
      return applied.outcomes;
    });
  } catch (e) {
    if (!(e instanceof StillUnresolved)) throw e;
    const now = ctx.clock.now();
    await ctx.db
      .updateTable('wbh_webhook_logs')
      .set({ wbh_unresolved_reason: e.reason, wbh_error_message: UNRESOLVED_MESSAGES[e.reason], wbh_update_time: now })
      .where('wbh_webhook_log_id', '=', kept.id)
      .execute();
    throw new StoreReplayError(`Event '${o.eventId}' is still unresolved (${e.reason}): fix the cause and replay it again`);
  }
  return { event_id: row.wbh_event_id, source: kept.source, event_type: row.wbh_event_type ?? '', replayed: true, outcomes };
}
