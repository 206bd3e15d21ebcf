import type { PluginState } from '../actions/registry.js';
import { API_VERSION } from '../http/envelope.js';
import { serviceVersion } from '../version.js';
import { addActions } from './actions.js';
import { DocumentBuilder } from './builder.js';
import { addCrud } from './crud.js';
import { addFixedEndpoints, type FixedEndpoint } from './endpoints.js';
import { addManagement } from './management.js';
import { outboundWebhooks } from './webhooks.js';
import { pluginManagementHandlers } from '../surfaces/management/registry.js';
import type { ManagementHandler } from '../surfaces/management/define.js';

/** What the document needs of each loaded plugin: its special channels' endpoints and its management handlers. */
export interface PluginDocumentParts {
  name: string;
  openApi?: FixedEndpoint[];
  management?: ManagementHandler[];
}

export type OpenApiDocument = Record<string, unknown> & { paths: Record<string, Record<string, Record<string, unknown>>> };

/**
 * The OpenAPI 3.1 document of /api/v1, built from the registries that drive the API: the fixed
 * endpoints and those of the active plugins, every action reachable with the active plugins, every CRUD
 * class exposed for a verb, and every management handler (plugins' while active).
 */
export function buildOpenApiDocument(plugins: PluginState, modules: readonly PluginDocumentParts[] = []): OpenApiDocument {
  const doc = new DocumentBuilder();
  addFixedEndpoints(doc, modules.filter((m) => plugins.isActive(m.name)).flatMap((m) => m.openApi ?? []));
  addActions(doc, plugins);
  addManagement(doc, plugins, pluginManagementHandlers(modules));
  addCrud(doc, plugins);
  return {
    openapi: '3.1.0',
    info: {
      title: 'Gatehouse platform API',
      version: serviceVersion(),
      description: `Every answer is a JSON envelope carrying api_version '${API_VERSION}' (success: success_message and data; failure: errortype, error and data). Clients branch on errortype plus HTTP status. Timestamps are UTC 'YYYY-MM-DD HH:MM:SS'. Send public_key and secret_key headers, or a browser session cookie with the X-Service-Csrf header.`,
    },
    jsonSchemaDialect: 'https://spec.openapis.org/oas/3.1/dialect/base',
    servers: [{ url: '/api/v1' }],
    security: [],
    tags: [...new Set(Object.values(doc.paths).flatMap((ops) => Object.values(ops).flatMap((op) => op.tags as string[])))].map((name) => ({ name })),
    paths: doc.paths,
    webhooks: outboundWebhooks(),
    components: doc.components,
  };
}

/** Documents by active plugin set: a build is reused until a plugin is switched on or off. */
export class OpenApiCache {
  private readonly built = new Map<string, string>();

  constructor(
    private readonly plugins: PluginState & { list(): Array<{ name: string; active: boolean }> },
    private readonly modules: readonly PluginDocumentParts[] = [],
  ) {}

  json(): string {
    const key = this.plugins.list().filter((p) => p.active && this.plugins.isActive(p.name)).map((p) => p.name).sort().join(',');
    let text = this.built.get(key);
    if (text === undefined) {
      text = JSON.stringify(buildOpenApiDocument(this.plugins, this.modules));
      this.built.set(key, text);
    }
    return text;
  }
}
