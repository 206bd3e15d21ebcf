import type { FastifyInstance } from 'fastify';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { SECURITY_HEADERS } from '../http/transport.js';
import type { Services } from '../services.js';
import { OpenApiCache, type PluginDocumentParts } from './document.js';

export const OPENAPI_PATH = '/api/openapi.json';
export const DOCS_PATH = '/api/docs';

/** Swagger UI's files, served from the installed package (never a CDN). */
const SWAGGER_ASSETS: Record<string, string> = {
  'swagger-ui.css': 'text/css; charset=utf-8',
  'swagger-ui-bundle.js': 'application/javascript; charset=utf-8',
};
const swaggerDir = path.dirname(createRequire(import.meta.url).resolve('swagger-ui-dist/package.json'));

/** Starts Swagger UI on the document; an external file, so the page's CSP needs no inline script. */
const INIT_SCRIPT = `window.addEventListener('DOMContentLoaded', function () {
  window.ui = SwaggerUIBundle({
    url: ${JSON.stringify(OPENAPI_PATH)},
    dom_id: '#reference',
    deepLinking: true,
    validatorUrl: null,
    tryItOutEnabled: false,
    defaultModelsExpandDepth: 0,
    docExpansion: 'none',
    filter: true,
  });
});
`;

const PAGE = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Gatehouse API reference</title>
<link rel="icon" href="data:,">
<link rel="stylesheet" href="${DOCS_PATH}/assets/swagger-ui.css">
<style>
body { margin: 0; }
@media (max-width: 600px) {
  .swagger-ui .wrapper { padding: 0 10px; }
  .swagger-ui table { table-layout: fixed; width: 100%; }
  .swagger-ui table td, .swagger-ui table th { overflow-wrap: anywhere; }
  .swagger-ui .response-col_links { display: none; }
}
</style>
</head>
<body>
<div id="reference"></div>
<script src="${DOCS_PATH}/assets/swagger-ui-bundle.js"></script>
<script src="${DOCS_PATH}/assets/init.js"></script>
</body>
</html>
`;

const CSP = "default-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; frame-ancestors 'none'; form-action 'none'";

/**
 * GET /api/openapi.json (outside /api/v1, whose every answer is an envelope) and the reference page at
 * /api/docs. The document follows the active plugins: one build per plugin set, reused.
 */
export async function openApiRoutes(app: FastifyInstance, services: Services, plugins: readonly PluginDocumentParts[]): Promise<void> {
  const cache = new OpenApiCache(services.plugins, plugins);
  const assets = new Map<string, { type: string; body: Buffer | string }>([['init.js', { type: 'application/javascript; charset=utf-8', body: INIT_SCRIPT }]]);

  app.addHook('onRequest', async (_request, reply) => {
    reply.headers(SECURITY_HEADERS);
  });

  app.get(OPENAPI_PATH, async (_request, reply) =>
    reply.type('application/json; charset=utf-8').header('cache-control', 'no-cache').send(cache.json()),
  );

  app.get(DOCS_PATH, async (_request, reply) => reply.type('text/html; charset=utf-8').header('cache-control', 'no-store').header('content-security-policy', CSP).send(PAGE));

  app.get(`${DOCS_PATH}/assets/:name`, async (request, reply) => {
    const name = (request.params as { name: string }).name;
    let asset = assets.get(name);
    if (!asset && Object.hasOwn(SWAGGER_ASSETS, name)) {
      asset = { type: SWAGGER_ASSETS[name]!, body: readFileSync(path.join(swaggerDir, name)) };
      assets.set(name, asset);
    }
    if (!asset) return reply.code(404).type('text/plain; charset=utf-8').send('Not found');
    return reply.type(asset.type).header('cache-control', 'public, max-age=3600').send(asset.body);
  });
}
