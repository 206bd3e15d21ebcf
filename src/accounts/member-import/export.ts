import type { Kysely } from 'kysely';
import type { DB } from '../../db/types.js';
import { csvLine } from '../../lib/csv.js';
import { MEMBER_COLUMNS } from './columns.js';

const PAGE = 1000;
/** Staff accounts are the site's operators, not its members: export leaves them out. */
const STAFF_PERMISSION = 5;

/**
 * Writes every live member as Ghost's member export does (DESIGN 16): the same columns, the tier's
 * display name in `tiers`, complimentary_plan true for a manual assignment, the card processor customer
 * id, created_at in ISO 8601. Read a page at a time (never every member in memory), in id order.
 * Returns how many members were written.
 */
export async function exportMembers(db: Kysely<DB>, write: (text: string) => void | Promise<void>): Promise<number> {
  await write(csvLine(MEMBER_COLUMNS));
  let afterId = 0;
  let count = 0;
  for (;;) {
    const rows = await db
      .selectFrom('usr_users')
      .leftJoin('grm_group_members', (j) => j.onRef('grm_foreign_key_id', '=', 'usr_user_id').on('grm_sbt_subscription_tier_id', 'is not', null))
      .leftJoin('sbt_subscription_tiers', 'sbt_subscription_tier_id', 'grm_sbt_subscription_tier_id')
      .select([
        'usr_user_id',
        'usr_email',
        'usr_first_name',
        'usr_last_name',
        'usr_contact_preferences',
        'usr_stripe_customer_id',
        'usr_create_time',
        'grm_assignment_method',
        'sbt_display_name',
      ])
      .where('usr_user_id', '>', afterId)
      .where('usr_delete_time', 'is', null)
      .where('usr_permission', '<', STAFF_PERMISSION)
      .orderBy('usr_user_id')
      .orderBy('grm_group_member_id')
      .limit(PAGE)
      .execute();
    let lastId = afterId;
    for (const r of rows) {
      const id = Number(r.usr_user_id);
      // A second tier row of the same user (not expected): the first is the current membership.
      if (id === lastId) continue;
      lastId = id;
      count++;
      await write(
        csvLine([
          String(id),
          r.usr_email,
          [r.usr_first_name, r.usr_last_name ?? ''].join(' ').trim(),
          '',
          String((r.usr_contact_preferences ?? '').split(',').includes('email')),
          String(r.grm_assignment_method === 'manual'),
          r.usr_stripe_customer_id ?? '',
          r.usr_create_time.toISOString(),
          '',
          '',
          r.sbt_display_name ?? '',
        ]),
      );
    }
    if (rows.length < PAGE) break;
    afterId = lastId;
  }
  return count;
}
