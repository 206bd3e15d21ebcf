import type { LightMyRequestResponse } from 'fastify';
import type { TestApp } from './app.js';

/** A minimal cookie jar over app.inject, enough to drive the website like a browser would. */
export class CookieJar {
  readonly cookies = new Map<string, string>();

  header(): string {
    return [...this.cookies].map(([k, v]) => `${k}=${v}`).join('; ');
  }

  absorb(res: LightMyRequestResponse): void {
    for (const c of res.cookies as Array<{ name: string; value: string; maxAge?: number; expires?: Date }>) {
      const expired = c.value === '' || c.maxAge === 0 || (c.expires !== undefined && c.expires.getTime() <= Date.now() && c.maxAge === undefined);
      if (expired) this.cookies.delete(c.name);
      else this.cookies.set(c.name, c.value);
    }
  }
}

export interface WebClient {
  jar: CookieJar;
  get(url: string, headers?: Record<string, string>): Promise<LightMyRequestResponse & { json: any }>;
  postForm(url: string, fields: Record<string, string>): Promise<LightMyRequestResponse & { json: any }>;
  api(method: 'GET' | 'POST' | 'PUT' | 'DELETE', url: string, opts?: { csrf?: string | null; payload?: unknown; headers?: Record<string, string> }): Promise<LightMyRequestResponse & { json: any }>;
  csrf(): string;
  formToken(html: string, formAction?: string): string;
}

export function webClient(t: TestApp, remoteAddress = '127.0.0.1'): WebClient {
  const jar = new CookieJar();
  const c: WebClient = {
    jar,
    async get(url, headers = {}) {
      const res = await t.request({ method: 'GET', url, headers: { cookie: jar.header(), ...headers }, remoteAddress });
      jar.absorb(res);
      return res;
    },
    async postForm(url, fields) {
      const res = await t.request({
        method: 'POST',
        url,
        headers: { cookie: jar.header(), 'content-type': 'application/x-www-form-urlencoded' },
        payload: new URLSearchParams(fields).toString(),
        remoteAddress,
      });
      jar.absorb(res);
      return res;
    },
    async api(method, url, opts = {}) {
      const csrf = opts.csrf === undefined ? c.csrf() : opts.csrf;
      const headers: Record<string, string> = { cookie: jar.header(), ...(csrf !== null ? { 'x-service-csrf': csrf } : {}), ...opts.headers };
      const res = await t.request({ method, url, headers, remoteAddress, ...(opts.payload !== undefined ? { payload: opts.payload as object } : {}) });
      jar.absorb(res);
      return res;
    },
    csrf() {
      return jar.cookies.get('service_api_csrf') ?? '';
    },
    formToken(html, formAction = '/login') {
      const form = html.slice(html.indexOf(`action="${formAction}"`));
      const m = /name="form_token" value="([0-9a-f]*)"/.exec(form);
      if (!m) throw new Error(`no form token for ${formAction}`);
      return m[1]!;
    },
  };
  return c;
}

/** Signs in through the website's form, as a browser without JavaScript would. */
export async function signIn(t: TestApp, email: string, password: string, remoteAddress?: string): Promise<WebClient> {
  const c = webClient(t, remoteAddress);
  const form = await c.get('/login');
  const res = await c.postForm('/login', { email, password, form_token: c.formToken(form.body), next: '/' });
  if (res.statusCode !== 303) throw new Error(`sign-in failed: ${res.statusCode}`);
  return c;
}
