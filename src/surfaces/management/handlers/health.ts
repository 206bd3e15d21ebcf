import { serviceVersion } from '../../../version.js';
import { defineManagementHandler } from '../define.js';

export default defineManagementHandler({
  method: 'GET',
  path: 'health',
  description: 'Liveness: {ok: true, version}',
  async handle() {
    return { ok: true, version: serviceVersion() };
  },
});
