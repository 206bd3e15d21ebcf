/**
 * A bookable resource's weekly availability (bkr_weekly_availability): for each weekday, the opening
 * windows as ["HH:MM", "HH:MM"] pairs in UTC, e.g. {"mon": [["09:00", "12:00"], ["13:00", "17:00"]]}.
 * Slots are bkr_slot_minutes long and start at a window's opening, one after another; a slot fits when it
 * starts on that grid and ends by the window's close. A malformed day or window offers no slots.
 */
export const WEEKDAYS = ['sun', 'mon', 'tue', 'wed', 'thu', 'fri', 'sat'] as const;
export type Weekday = (typeof WEEKDAYS)[number];

const TIME = /^(\d{2}):(\d{2})$/;

/** Minutes since midnight of 'HH:MM' (24:00 allowed as a window's close), or null. */
export function minuteOfDay(s: unknown): number | null {
  const m = typeof s === 'string' ? TIME.exec(s) : null;
  if (!m) return null;
  const [h, min] = [Number(m[1]), Number(m[2])];
  if (min > 59 || h > 24 || (h === 24 && min !== 0)) return null;
  return h * 60 + min;
}

/** The day's windows as [open, close) minute pairs, malformed ones dropped. */
export function windowsOf(availability: unknown, day: Weekday): Array<[number, number]> {
  if (!availability || typeof availability !== 'object' || Array.isArray(availability)) return [];
  const windows = (availability as Record<string, unknown>)[day];
  if (!Array.isArray(windows)) return [];
  const out: Array<[number, number]> = [];
  for (const w of windows) {
    if (!Array.isArray(w) || w.length !== 2) continue;
    const [open, close] = [minuteOfDay(w[0]), minuteOfDay(w[1])];
    if (open !== null && close !== null && open < close) out.push([open, close]);
  }
  return out;
}

/** Whether a slot of `minutes` starting at `start` (UTC) is one the resource offers. */
export function slotFits(availability: unknown, start: Date, minutes: number): boolean {
  if (start.getUTCSeconds() !== 0 || start.getUTCMilliseconds() !== 0) return false;
  const at = start.getUTCHours() * 60 + start.getUTCMinutes();
  return windowsOf(availability, WEEKDAYS[start.getUTCDay()]!).some(([open, close]) => at >= open && at + minutes <= close && (at - open) % minutes === 0);
}
