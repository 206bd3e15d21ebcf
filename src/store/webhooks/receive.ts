import type { Kysely } from 'kysely';
import { deferredWrite } from '../../db/deferred-write.js';
import type { DB, UnresolvedReason } from '../../db/types.js';
import { ApiError, notFound } from '../../http/errors.js';
import type { TierMembershipService } from '../../tiers/membership.js';
import type { StoreContext, StoreEvent, VerifiedDelivery, WebhookAdapter, WebhookRequest } from '../events.js';
import { applyStoreEvent, type EventOutcome } from '../processor.js';
import { androidStoreWebhook } from './android-store.js';
import { cardProcessorWebhook } from './card-processor.js';
import { iosStoreWebhook } from './ios-store.js';
import { walletProviderWebhook } from './wallet-provider.js';

export const WEBHOOK_ADAPTERS: Readonly<Record<string, WebhookAdapter>> = Object.freeze({
  card_processor: cardProcessorWebhook,
  wallet_provider: walletProviderWebhook,
  ios_store: iosStoreWebhook,
  android_store: androidStoreWebhook,
});

export interface WebhookResult {
  event_id: string;
  event_type: string;
  duplicate: boolean;
  /** Whether the store acted (false: inactive store, or an event type the store does not act on). */
  processed: boolean;
  outcomes: EventOutcome[];
}

const MAX_ERROR = 1000;

/** What applying a delivery's events did, and why it stays listed as not applied (null: it applied). */
export interface AppliedDelivery {
  outcomes: EventOutcome[];
  unresolved: UnresolvedReason | null;
}

/** Why an event was kept as not applied, in words for the log's error message. */
export const UNRESOLVED_MESSAGES: Record<UnresolvedReason, string> = {
  unknown_user: 'unresolved user',
  unknown_product: 'unresolved product',
  store_inactive: 'store inactive: acknowledged, nothing assigned',
};

/**
 * Applies a delivery's normalised events through the processor inside the caller's transaction (the
 * one holding its log row); a purchase whose user or product cannot be resolved makes it unresolved.
 */
export async function applyDelivery(
  trx: Kysely<DB>,
  ctx: StoreContext,
  membership: TierMembershipService,
  webhookLogId: number,
  events: StoreEvent[],
): Promise<AppliedDelivery> {
  const outcomes: EventOutcome[] = [];
  const deps = { clock: ctx.clock, membership: membership.within(trx), webhookLogId };
  for (const ev of events) outcomes.push(...(await applyStoreEvent(trx, deps, ev)));
  const missing = outcomes.find((o) => o.outcome === 'unresolved');
  return { outcomes, unresolved: missing?.outcome === 'unresolved' ? (missing.missing === 'user' ? 'unknown_user' : 'unknown_product') : null };
}

/** The log row's claim: inserted now, or found (and locked) from an earlier delivery of the same event. */
async function claim(trx: Kysely<DB>, source: string, d: VerifiedDelivery, now: Date): Promise<{ id: number; processed: boolean }> {
  const inserted = await trx
    .insertInto('wbh_webhook_logs')
    .values({
      wbh_provider: source,
      wbh_event_type: d.eventType.slice(0, 100),
      wbh_event_id: d.eventId.slice(0, 255),
      wbh_payload: JSON.stringify(d.payload),
      wbh_processed: false,
      wbh_event_time: d.eventTime,
      wbh_create_time: now,
      wbh_update_time: now,
    })
    .onConflict((oc) => oc.columns(['wbh_provider', 'wbh_event_id']).doNothing())
    .returning('wbh_webhook_log_id')
    .executeTakeFirst();
  if (inserted) return { id: Number(inserted.wbh_webhook_log_id), processed: false };
  // A concurrent delivery of the same event waits here until the first one commits or rolls back.
  const row = await trx
    .selectFrom('wbh_webhook_logs')
    .select(['wbh_webhook_log_id', 'wbh_processed'])
    .where('wbh_provider', '=', source)
    .where('wbh_event_id', '=', d.eventId.slice(0, 255))
    .forUpdate()
    .executeTakeFirstOrThrow();
  return { id: Number(row.wbh_webhook_log_id), processed: row.wbh_processed === true };
}

/** Records a failed processing (after its transaction rolled back) so the retry is processed again. */
async function recordFailure(db: Kysely<DB>, source: string, d: VerifiedDelivery, message: string, now: Date): Promise<void> {
  await db
    .insertInto('wbh_webhook_logs')
    .values({
      wbh_provider: source,
      wbh_event_type: d.eventType.slice(0, 100),
      wbh_event_id: d.eventId.slice(0, 255),
      wbh_payload: JSON.stringify(d.payload),
      wbh_processed: false,
      wbh_error_message: message.slice(0, MAX_ERROR),
      wbh_event_time: d.eventTime,
      wbh_create_time: now,
      wbh_update_time: now,
    })
    .onConflict((oc) =>
      oc
        .columns(['wbh_provider', 'wbh_event_id'])
        .doUpdateSet({ wbh_error_message: message.slice(0, MAX_ERROR), wbh_update_time: now })
        .where('wbh_webhook_logs.wbh_processed', 'is not', true),
    )
    .execute();
}

/**
 * One provider callback, in order: the source's own signature verification (before any state is read
 * or written), then the dedup claim on (provider, event id), then the normalised events applied in the
 * same transaction as the log row. A duplicate of a processed event changes nothing; a failure rolls
 * everything back, is logged unprocessed with its error and answered 500 so the provider retries. An
 * event whose purchase cannot be resolved, or that arrives while the store is inactive, is answered 200
 * and kept as not applied with its reason, for the operator to replay (DESIGN 13).
 */
export async function receiveWebhook(
  source: string,
  req: WebhookRequest,
  ctx: StoreContext,
  opts: { active: boolean; membership: TierMembershipService; log?: (err: unknown) => void },
): Promise<WebhookResult> {
  const adapter = Object.prototype.hasOwnProperty.call(WEBHOOK_ADAPTERS, source) ? WEBHOOK_ADAPTERS[source] : undefined;
  if (!adapter) throw notFound(`No webhook source '${source}'`);
  const delivery = await adapter.verify(req, ctx);
  const base = { event_id: delivery.eventId, event_type: delivery.eventType };
  const { db, clock } = ctx;

  const seen = await db
    .selectFrom('wbh_webhook_logs')
    .select('wbh_processed')
    .where('wbh_provider', '=', source)
    .where('wbh_event_id', '=', delivery.eventId.slice(0, 255))
    .executeTakeFirst();
  if (seen?.wbh_processed === true) return { ...base, duplicate: true, processed: false, outcomes: [] };

  const fail = async (err: unknown): Promise<never> => {
    opts.log?.(err);
    await recordFailure(db, source, delivery, err instanceof Error ? err.message : String(err), clock.now());
    throw new ApiError(500, 'TransactionError', 'The event could not be processed; it will be accepted on retry');
  };

  // With the store inactive nothing past verification and logging runs.
  let events: StoreEvent[] = [];
  if (opts.active) {
    try {
      events = await delivery.normalise(ctx);
    } catch (err) {
      return fail(err);
    }
  }

  try {
    return await db.transaction().execute(async (trx) => {
      const now = clock.now();
      const log = await claim(trx, source, delivery, now);
      if (log.processed) return { ...base, duplicate: true, processed: false, outcomes: [] };
      // With the store inactive an event it acts on is kept, not applied, until the operator replays it.
      const applied: AppliedDelivery = opts.active
        ? await applyDelivery(trx, ctx, opts.membership, log.id, events)
        : { outcomes: [], unresolved: delivery.acts ? 'store_inactive' : null };
      // The transaction's last write: it goes to the embedded database with the commit.
      await deferredWrite(
        trx,
        trx
          .updateTable('wbh_webhook_logs')
          .set({
            wbh_processed: true,
            wbh_error_message: applied.unresolved ? UNRESOLVED_MESSAGES[applied.unresolved] : null,
            wbh_unresolved_reason: applied.unresolved,
            wbh_update_time: now,
          })
          .where('wbh_webhook_log_id', '=', log.id),
      );
      const outcomes = applied.outcomes;
      return { ...base, duplicate: false, processed: opts.active && events.length > 0, outcomes };
    });
  } catch (err) {
    return fail(err);
  }
}
