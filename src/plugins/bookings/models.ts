import type { Kysely } from 'kysely';
import { transactionError } from '../../http/errors.js';
import { standardTimes } from '../../models/common.js';
import { col, defineModel, type Row } from '../../models/define.js';
import { availabilityProblem } from './availability.js';

// The bookings plugin's models (plugins/bookings/plugin.json). They live under src/ so they compile with
// the rest; `plugin: 'bookings'` makes them CRUD resources only while the plugin is active.

/** A malformed weekly availability would silently offer no slots: refuse it as CRUD refuses bad values. */
function checkAvailability(values: Row): void {
  if (!('bkr_weekly_availability' in values)) return;
  const problem = availabilityProblem(values.bkr_weekly_availability);
  if (problem) throw transactionError(`Invalid value for bkr_weekly_availability: ${problem}`);
}

/** A bookable thing: owner-less, so staff write; public read. */
export const BookingResource = defineModel({
  className: 'BookingResource',
  table: 'bkr_booking_resources',
  prefix: 'bkr',
  primaryKey: 'bkr_booking_resource_id',
  owner: null,
  plugin: 'bookings',
  columns: {
    bkr_booking_resource_id: col.serial(),
    bkr_name: col.varchar(255, { required: true }),
    bkr_description: col.text(),
    /** e.g. {"mon": [["09:00","17:00"]], ...} */
    bkr_weekly_availability: col.jsonb(),
    bkr_slot_minutes: col.int({ min: 5, maxValue: 1440 }),
    ...standardTimes('bkr'),
  },
  exposure: { readable: true, writable: true, publicRead: true },
  createNew: async (input, ctx) => {
    checkAvailability(input);
    const row = await (ctx.trx as unknown as Kysely<Record<string, Row>>)
      .insertInto('bkr_booking_resources')
      .values(input)
      .returning('bkr_booking_resource_id')
      .executeTakeFirstOrThrow();
    return Number(row.bkr_booking_resource_id);
  },
  beforeUpdate: async (_stored, changes) => checkAvailability(changes),
});

/**
 * One booked slot; a live booking's (resource, start) is unique. Members book through the booking action
 * (slot and availability checks); raw CRUD writes skip those (CRUD rule 6), so they are staff's only.
 */
export const Booking = defineModel({
  className: 'Booking',
  table: 'bkg_bookings',
  prefix: 'bkg',
  primaryKey: 'bkg_booking_id',
  owner: 'bkg_usr_user_id',
  plugin: 'bookings',
  columns: {
    bkg_booking_id: col.serial(),
    bkg_bkr_booking_resource_id: col.bigint({ required: true }),
    bkg_usr_user_id: col.bigint({ required: true }),
    bkg_start_time: col.timestamp({ required: true }),
    bkg_end_time: col.timestamp({ required: true }),
    bkg_status: col.varchar(20, { options: ['confirmed', 'cancelled'] }),
    ...standardTimes('bkg'),
  },
  exposure: { readable: true, writable: true, writableBy: 'staff' },
});
