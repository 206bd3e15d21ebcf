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

/** What is wrong with a weekly availability as stored JSON text (null: none set, which offers no slots). */
export function availabilityProblem(json: unknown): string | null {
  if (json === null || json === undefined) return null;
  let value: unknown;
  try {
    value = typeof json === 'string' ? JSON.parse(json) : json;
  } catch {
    return 'expected JSON text';
  }
  if (value === null) return null;
  if (typeof value !== 'object' || Array.isArray(value)) return 'expected an object keyed by weekday (mon ... sun)';
  for (const [day, windows] of Object.entries(value as Record<string, unknown>)) {
    if (!(WEEKDAYS as readonly string[]).includes(day)) return `'${day}' is not a weekday (sun, mon, tue, wed, thu, fri, sat)`;
    if (!Array.isArray(windows)) return `${day}: expected a list of ["HH:MM", "HH:MM"] windows`;
    for (const w of windows) {
      const ok = Array.isArray(w) && w.length === 2 && minuteOfDay(w[0]) !== null && minuteOfDay(w[1]) !== null && minuteOfDay(w[0])! < minuteOfDay(w[1])!;
      if (!ok) return `${day}: ${JSON.stringify(w)} is not an ["HH:MM", "HH:MM"] window that opens before it closes`;
    }
  }
  return null;
}
