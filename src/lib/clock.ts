/** The one source of time. Tests replace it with a TestClock; nothing else calls Date.now(). */
export interface Clock {
  now(): Date;
  nowMs(): number;
}

export const systemClock: Clock = {
  now: () => new Date(),
  nowMs: () => Date.now(),
};

/** A clock that only moves when told to. */
export class TestClock implements Clock {
  private ms: number;
  constructor(start: Date | string = '2026-01-01T00:00:00Z') {
    this.ms = new Date(start).getTime();
  }
  now(): Date {
    return new Date(this.ms);
  }
  nowMs(): number {
    return this.ms;
  }
  advance(ms: number): void {
    this.ms += ms;
  }
  advanceSeconds(s: number): void {
    this.ms += s * 1000;
  }
  set(at: Date | string): void {
    this.ms = new Date(at).getTime();
  }
}
