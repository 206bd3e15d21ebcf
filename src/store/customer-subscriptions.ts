import type { Kysely } from 'kysely';
import type { CustomerLinker } from '../accounts/member-import/import.js';
import type { DB } from '../db/types.js';
import type { TierMembershipService } from '../tiers/membership.js';
import type { StoreContext } from './events.js';
import { findItemByReference } from './orders.js';
import { applyStoreEvent, type EventOutcome } from './processor.js';
import type { CustomerSubscription } from './providers/card-processor.js';
import { cardStatus } from './reconcile/providers.js';
import { intOrNull } from './events.js';

/** A customer's subscriptions as the processor reported them, and when it was read. */
export interface CustomerReading {
  readAt: Date;
  subscriptions: CustomerSubscription[];
}

/** Live at the provider: paid up (or in its retry period), perhaps set to end at the period's end. */
const isLive = (s: CustomerSubscription) => {
  const status = cardStatus(s.status, s.cancelAtPeriodEnd);
  return status === 'active' || status === 'cancelled' || status === 'in_grace';
};

function describe(subscriptionId: string, outcome: EventOutcome | undefined): string {
  switch (outcome?.outcome) {
    case 'granted':
      return `subscription ${subscriptionId}: granted (${outcome.grant})`;
    case 'unresolved':
      return `subscription ${subscriptionId}: not granted, no product sells its price`;
    case 'refused_other_source':
      return `subscription ${subscriptionId}: recorded, refused for tier purposes (another billing source holds the tier)`;
    default:
      return `subscription ${subscriptionId}: ${outcome?.outcome ?? 'nothing done'}`;
  }
}

/**
 * Linking a card processor customer to a member (DESIGN 16): the customer's live subscriptions are read
 * from the processor, and each one we have not recorded yet is applied as a purchase through the store's
 * processor, so through the one grant path (as reconciliation applies what it reads), recorded with how
 * 'import'. The subscription is then ours like one bought here: its renewals, cancellation and expiry
 * arrive as webhooks and reconciliation reads it. A subscription already recorded is left alone, so a
 * second import changes nothing. A scheduled cancellation is applied after the purchase.
 */
export function cardCustomerLinker(ctx: StoreContext, membership: TierMembershipService): CustomerLinker<CustomerReading> {
  return {
    async read(customerId) {
      const readAt = ctx.clock.now();
      const subscriptions = await ctx.deps.cardProcessor(ctx.settings).customerSubscriptions(customerId);
      return { readAt, subscriptions: subscriptions.filter(isLive) };
    },
    async grant(trx: Kysely<DB>, userId: number, reading: CustomerReading) {
      const notes: string[] = [];
      const deps = { clock: ctx.clock, membership: membership.within(trx).noting({ how: 'import' }), webhookLogId: 0 };
      for (const sub of reading.subscriptions) {
        if (await findItemByReference(trx, 'card_processor', sub.id)) {
          notes.push(`subscription ${sub.id}: already recorded`);
          continue;
        }
        const base = {
          source: 'card_processor' as const,
          reference: sub.id,
          user: { userId },
          product: { productId: intOrNull(sub.metadata.product_id), providerProductId: sub.priceId },
          eventTime: reading.readAt,
        };
        const [outcome] = await applyStoreEvent(trx, deps, { ...base, kind: 'purchase', periodEnd: sub.currentPeriodEnd });
        notes.push(describe(sub.id, outcome));
        if (sub.cancelAtPeriodEnd && outcome?.outcome === 'granted') {
          await applyStoreEvent(trx, deps, { ...base, kind: 'cancellation_scheduled', periodEnd: sub.currentPeriodEnd, receiptTime: true });
        }
      }
      if (reading.subscriptions.length === 0) notes.push('no live subscription');
      return notes;
    },
  };
}
