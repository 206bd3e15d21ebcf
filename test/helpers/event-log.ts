import type { TestApp } from './app.js';

/** One row of the outbound event log, its body parsed. */
export interface LoggedEvent {
  rowId: number;
  type: string;
  userId: number | null;
  id: string;
  timestamp: string;
  api_version: string;
  data: Record<string, any>;
}

/** The newest row id of the event log (0 when empty): what a test reads events after. */
export async function eventMark(t: TestApp): Promise<number> {
  const row = await t.services.db
    .selectFrom('obe_outbound_events')
    .select((eb) => eb.fn.max('obe_outbound_event_id').as('max'))
    .executeTakeFirst();
  return Number(row?.max ?? 0);
}

/** The events written after `mark`, in the order they were written (optionally one member's only). */
export async function eventsSince(t: TestApp, mark: number, o: { userId?: number } = {}): Promise<LoggedEvent[]> {
  const rows = await t.services.db
    .selectFrom('obe_outbound_events')
    .selectAll()
    .where('obe_outbound_event_id', '>', mark)
    .$if(o.userId !== undefined, (q) => q.where('obe_usr_user_id', '=', o.userId!))
    .orderBy('obe_outbound_event_id')
    .execute();
  return rows.map((r) => {
    const body = (typeof r.obe_payload === 'string' ? JSON.parse(r.obe_payload) : r.obe_payload) as Record<string, any>;
    return { rowId: Number(r.obe_outbound_event_id), type: r.obe_type, userId: r.obe_usr_user_id === null ? null : Number(r.obe_usr_user_id), ...(body as any) };
  });
}

/** Just the types, in order. */
export async function typesSince(t: TestApp, mark: number, o: { userId?: number } = {}): Promise<string[]> {
  return (await eventsSince(t, mark, o)).map((e) => e.type);
}
