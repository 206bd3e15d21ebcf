import { describe, expect, it } from 'vitest';
import { availabilityProblem, minuteOfDay, slotFits, windowsOf } from '../../src/plugins/bookings/availability.js';

const week = { mon: [['09:00', '12:00']], sat: [['22:00', '24:00']], tue: [['10:00', '09:00'], ['x', '11:00'], 'bad'] };

describe('weekly availability', () => {
  it('reads HH:MM, 24:00 as a close, nothing else', () => {
    expect([minuteOfDay('00:00'), minuteOfDay('09:30'), minuteOfDay('24:00')]).toEqual([0, 570, 1440]);
    for (const bad of ['24:01', '9:00', '12:60', 900, null]) expect(minuteOfDay(bad)).toBeNull();
  });

  it('drops malformed windows and days', () => {
    expect(windowsOf(week, 'tue')).toEqual([]);
    expect(windowsOf(week, 'wed')).toEqual([]);
    expect(windowsOf([['09:00', '10:00']], 'mon')).toEqual([]);
    expect(windowsOf(null, 'mon')).toEqual([]);
  });

  it('fits slots that start on the grid from the opening and end by the close', () => {
    const at = (s: string) => new Date(`${s}Z`);
    expect(slotFits(week, at('2026-03-02T09:00:00'), 60)).toBe(true);
    expect(slotFits(week, at('2026-03-02T11:00:00'), 60)).toBe(true);
    expect(slotFits(week, at('2026-03-02T11:30:00'), 60)).toBe(false);
    expect(slotFits(week, at('2026-03-02T09:30:00'), 60)).toBe(false);
    expect(slotFits(week, at('2026-03-02T09:00:30'), 60)).toBe(false);
    expect(slotFits(week, at('2026-03-07T23:00:00'), 60)).toBe(true);
    expect(slotFits(week, at('2026-03-03T10:00:00'), 30)).toBe(false);
  });
});

describe('availabilityProblem', () => {
  it('accepts none, an empty week and well-formed windows', () => {
    for (const ok of [null, 'null', '{}', '{"mon":[["09:00","12:00"],["13:00","24:00"]],"sun":[]}']) expect(availabilityProblem(ok)).toBeNull();
  });

  it('names what is wrong', () => {
    expect(availabilityProblem('[1]')).toBe('expected an object keyed by weekday (mon ... sun)');
    expect(availabilityProblem('{"xyz":[]}')).toMatch(/'xyz' is not a weekday/);
    expect(availabilityProblem('{"mon":"09:00-17:00"}')).toMatch(/^mon: expected a list/);
    expect(availabilityProblem('{"mon":[["09:00"]]}')).toMatch(/^mon: \["09:00"\] is not/);
    expect(availabilityProblem('{"mon":[["12:00","12:00"]]}')).toMatch(/opens before it closes/);
    expect(availabilityProblem('{')).toBe('expected JSON text');
  });
});
