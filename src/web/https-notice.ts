import type { FastifyRequest } from 'fastify';
import type { Settings } from '../settings/store.js';
import { HTTPS_COMMAND } from '../http/transport.js';
import { html, type SafeHtml } from './html.js';

/** Whether the API would refuse this request's scheme: api_require_https is on and it came over plain HTTP. */
export function apiRefusesRequest(request: FastifyRequest, settings: Settings): boolean {
  return request.protocol !== 'https' && settings.bool('api_require_https');
}

/**
 * The staff pages' banner while the API refuses plain HTTP: the pages themselves load, but every
 * script on them that calls the API (and every app pointed at this address) gets 426.
 */
export function httpsNotice(): SafeHtml {
  return html`<div class="banner" id="https-banner" role="alert"><strong>The API refuses plain HTTP here.</strong> The setting <code class="ident">api_require_https</code> is on and this page came over http://, so page scripts and apps calling the API get 426. Serve the site over HTTPS, or for local development run:
<pre class="command">${HTTPS_COMMAND}</pre></div>`;
}
