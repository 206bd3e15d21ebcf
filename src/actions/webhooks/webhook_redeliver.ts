import { parseTimestamp } from '../../lib/time.js';
import { redeliver } from '../../outbound/webhooks/endpoints.js';
import { defineAction } from '../define.js';
import { SUPERADMIN_WRITE } from './auth.js';

export default defineAction({
  name: 'webhook_redeliver',
  description: 'Send again, with the same webhook-id (superadmin): one event (event_id, optionally to one endpoint_id), or every failure of endpoint_id since a time',
  mutates: true,
  auth: SUPERADMIN_WRITE,
  input: {
    event_id: { type: 'string', max_length: 40 },
    endpoint_id: { type: 'int', min: 1 },
    since: { type: 'datetime' },
  },
  async run({ input, db, clock, settings }) {
    const since = input.since ? parseTimestamp(input.since) : null;
    const result = await redeliver({ db, clock, settings }, { event_id: input.event_id ?? null, endpoint_id: input.endpoint_id ?? null, since });
    return { data: result, message: `${result.redelivered} ${result.redelivered === 1 ? 'delivery' : 'deliveries'} due again.` };
  },
});
