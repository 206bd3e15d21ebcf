import type { Kysely } from 'kysely';
import type { DB } from '../../db/types.js';
import type { Clock } from '../../lib/clock.js';
import type { RecordedEvent } from '../catalogue.js';

// TODO(h-webhooks): one delivery row per enabled endpoint whose filter matches, due at once.
export async function fanOutWebhooks(_trx: Kysely<DB>, _clock: Clock, _event: RecordedEvent): Promise<void> {}
