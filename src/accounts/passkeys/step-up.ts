import type { Clock } from '../../lib/clock.js';

/** Where a browser session remembers its last passkey step-up (server-side session data, never sent out). */
const KEY = 'passkey_stepup';

interface StepUpMark {
  user_id: number;
  time_ms: number;
}

export function markSteppedUp(session: Record<string, unknown>, userId: number, clock: Clock): void {
  session[KEY] = { user_id: userId, time_ms: clock.nowMs() } satisfies StepUpMark;
}

/** Whether this session's user confirmed a passkey within the window. */
export function hasRecentStepUp(session: Record<string, unknown> | null, userId: number, clock: Clock, windowSeconds: number): boolean {
  const mark = session?.[KEY] as Partial<StepUpMark> | undefined;
  if (!mark || mark.user_id !== userId || typeof mark.time_ms !== 'number') return false;
  const age = clock.nowMs() - mark.time_ms;
  return age >= 0 && age <= windowSeconds * 1000;
}
