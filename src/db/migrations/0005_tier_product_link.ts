import type { Kysely } from 'kysely';
import { runStatements } from './run-statements.js';

// A product's tier link (pro_products from 0002) must name a tier that exists (0003).
export async function up(db: Kysely<any>): Promise<void> {
  await runStatements(db, [
    `alter table pro_products add constraint pro_products_tier_fk
      foreign key (pro_sbt_subscription_tier_id) references sbt_subscription_tiers (sbt_subscription_tier_id)`,
  ]);
}

export async function down(): Promise<void> {
  throw new Error('migrations are forward-only');
}
