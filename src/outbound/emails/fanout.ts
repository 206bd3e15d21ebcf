import type { Kysely } from 'kysely';
import type { DB } from '../../db/types.js';
import type { Clock } from '../../lib/clock.js';
import type { RecordedEvent } from '../events.js';

// TODO(h-emails): the member emails this event's type sends (at most once per event and recipient).
export async function fanOutEmails(_trx: Kysely<DB>, _clock: Clock, _event: RecordedEvent): Promise<void> {}
