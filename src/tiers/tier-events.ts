import type { Kysely } from 'kysely';
import type { DB } from '../db/types.js';
import type { Clock } from '../lib/clock.js';
import { memberSubject } from '../outbound/member.js';
import { recordEvent } from '../outbound/events.js';
import type { ChangeReference } from './change-tracking.js';

/** How a tier came or went, as receivers read it (DESIGN 15): billing (purchase), staff, an import, reconciliation. */
export type TierEventHow = 'purchase' | 'manual' | 'import' | 'reconcile';
/** Why a tier went (DESIGN 15). */
export type TierRemovedReason = 'expiry' | 'cancellation' | 'refund' | 'billing_failure' | 'revoked';

/**
 * The removal path's own reasons as receivers read them: a hold is a billing failure; a pause (the
 * member or the provider stopped the subscription for a while) and a staff removal withdraw access
 * without ending anything, which is 'revoked'. The event also carries the path's own word as `cause`.
 */
export const TIER_REMOVED_REASON: Record<'expiry' | 'cancellation' | 'refund' | 'on_hold' | 'paused' | 'manual', TierRemovedReason> = {
  expiry: 'expiry',
  cancellation: 'cancellation',
  refund: 'refund',
  on_hold: 'billing_failure',
  paused: 'revoked',
  manual: 'revoked',
};

export interface TierRef {
  sbt_subscription_tier_id: number;
  sbt_name: string;
  sbt_tier_level: number;
}

const tierData = (t: TierRef | null | undefined) => (t ? { id: Number(t.sbt_subscription_tier_id), name: t.sbt_name, level: Number(t.sbt_tier_level) } : null);

/** `how` from a service's note (reconcile, import), else the path's own. */
export function tierHow(note: Readonly<Record<string, unknown>>, fallback: TierEventHow): TierEventHow {
  const how = note.how;
  return how === 'reconcile' || how === 'import' || how === 'manual' || how === 'purchase' ? how : fallback;
}

interface TierEventBase {
  userId: number;
  how: TierEventHow;
  source: string | null;
  reference: ChangeReference | null;
}

const orderItemOf = (reference: ChangeReference | null) => (reference?.type === 'order_item' ? reference.id : null);

/** tier.granted: the member joined `tier` (from `previous`, when they moved). */
export async function recordTierGranted(
  trx: Kysely<DB>,
  clock: Clock,
  e: TierEventBase & { tier: TierRef; previous: TierRef | null | undefined; productId: number | null },
): Promise<void> {
  await recordEvent(
    trx,
    clock,
    'tier.granted',
    {
      ...(await memberSubject(trx, e.userId)),
      tier: tierData(e.tier),
      previous_tier: tierData(e.previous),
      how: e.how,
      source: e.source,
      product_id: e.productId,
      order_item_id: orderItemOf(e.reference),
    },
    { userId: e.userId },
  );
}

/** tier.removed: the member left `tier`. */
export async function recordTierRemoved(
  trx: Kysely<DB>,
  clock: Clock,
  e: TierEventBase & { tier: TierRef; cause: keyof typeof TIER_REMOVED_REASON },
): Promise<void> {
  await recordEvent(
    trx,
    clock,
    'tier.removed',
    {
      ...(await memberSubject(trx, e.userId)),
      tier: tierData(e.tier),
      how: e.how,
      reason: TIER_REMOVED_REASON[e.cause],
      cause: e.cause,
      source: e.source,
      order_item_id: orderItemOf(e.reference),
    },
    { userId: e.userId },
  );
}
