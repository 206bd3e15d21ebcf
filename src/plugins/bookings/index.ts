import { definePlugin } from '../../plugin-kit/index.js';
import booking from './actions/booking.js';
import { Booking, BookingResource } from './models.js';

/**
 * The bookings plugin. Its tables come from the core migration 0002 (they predate plugin migrations, and
 * databases in use already have them).
 */
export default definePlugin({
  name: 'bookings',
  models: [BookingResource, Booking],
  actions: [booking],
});
