import { defineManagementHandler, effectiveAuth } from '../define.js';

export default defineManagementHandler({
  method: 'GET',
  path: '',
  description: 'Lists every management endpoint with its method and description',
  async handle(_req, { endpoints }) {
    return {
      endpoints: endpoints.map((h) => ({
        method: h.method,
        path: h.path === '' ? '/management' : `/management/${h.path}`,
        description: h.description,
        auth: effectiveAuth(h),
      })),
    };
  },
});
