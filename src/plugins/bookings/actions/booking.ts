import { businessError } from '../../../http/errors.js';
import { formatTimestamp, parseTimestamp } from '../../../lib/time.js';
import { slotFits } from '../availability.js';
import { actingUser } from '../../../actions/account/user.js';
import { defineAction } from '../../../actions/define.js';
import { isUniqueViolation } from '../../../db/errors.js';
import { workflowTables } from '../../../events/tables.js';

/**
 * Books one slot of a bookable resource for the acting user (the bookings plugin; the contract names the
 * action 'booking'). The resource row is locked while the slot is checked, and a live booking's
 * (resource, start) is unique in the database, so one slot is never booked twice.
 */
export default defineAction({
  name: 'booking',
  plugin: 'bookings',
  description: 'Book an appointment slot of a bookable resource',
  mutates: true,
  input: {
    bkr_booking_resource_id: { type: 'int', required: true, min: 1 },
    start_time: { type: 'datetime', required: true },
  },
  async run(ctx) {
    const { input, db, clock } = ctx;
    const me = actingUser(ctx.user);
    const now = clock.now();
    const w = workflowTables(db);
    const resource = await w
      .selectFrom('bkr_booking_resources')
      .select(['bkr_booking_resource_id', 'bkr_name', 'bkr_weekly_availability', 'bkr_slot_minutes'])
      .where('bkr_booking_resource_id', '=', input.bkr_booking_resource_id)
      .where('bkr_delete_time', 'is', null)
      .forUpdate()
      .executeTakeFirst();
    if (!resource) throw businessError('That resource is not available for booking', { bkr_booking_resource_id: input.bkr_booking_resource_id });
    const start = parseTimestamp(input.start_time)!;
    const end = new Date(start.getTime() + resource.bkr_slot_minutes * 60_000);
    if (start.getTime() <= now.getTime()) throw businessError('That slot is in the past');
    if (!slotFits(resource.bkr_weekly_availability, start, resource.bkr_slot_minutes)) {
      throw businessError(`${input.start_time} is not a ${resource.bkr_slot_minutes}-minute slot of ${resource.bkr_name}'s availability`);
    }
    const taken = businessError(`That slot of ${resource.bkr_name} is already booked`);
    const overlapping = await w
      .selectFrom('bkg_bookings')
      .select('bkg_booking_id')
      .where('bkg_bkr_booking_resource_id', '=', resource.bkr_booking_resource_id)
      .where('bkg_delete_time', 'is', null)
      .where('bkg_status', '=', 'confirmed')
      .where('bkg_start_time', '<', end)
      .where('bkg_end_time', '>', start)
      .executeTakeFirst();
    if (overlapping) throw taken;
    const row = await w
      .insertInto('bkg_bookings')
      .values({ bkg_bkr_booking_resource_id: resource.bkr_booking_resource_id, bkg_usr_user_id: me.usr_user_id, bkg_start_time: start, bkg_end_time: end, bkg_create_time: now, bkg_update_time: now })
      .returning('bkg_booking_id')
      .executeTakeFirstOrThrow()
      .catch((e: unknown) => {
        if (isUniqueViolation(e)) throw taken;
        throw e;
      });
    return {
      data: { booking_id: row.bkg_booking_id, resource_id: resource.bkr_booking_resource_id, start_time: formatTimestamp(start), end_time: formatTimestamp(end) },
      message: `${resource.bkr_name} is booked for you.`,
    };
  },
});
