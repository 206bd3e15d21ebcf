import { UNRESOLVED_LIMIT, listUnresolvedEvents } from '../../../../store/unresolved.js';
import { defineManagementHandler } from '../../define.js';

export default defineManagementHandler({
  method: 'GET',
  path: 'store/unresolved',
  description: `Verified store events kept as not applied (unknown user or product, or received while the store was inactive), oldest first (first ${UNRESOLVED_LIMIT}); apply one with \`gatehouse store replay --event-id ID\``,
  async handle(_req, { services }) {
    const { total, events } = await listUnresolvedEvents(services.db);
    return { count: events.length, total, events };
  },
});
