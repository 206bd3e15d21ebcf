import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/** One request a fake provider received, as recorded for assertions. */
export interface RecordedCall {
  method: string;
  path: string;
  headers: IncomingMessage['headers'];
  body: any;
}

export interface FakeRequest extends RecordedCall {
  params: Record<string, string>;
  query: URLSearchParams;
  rawBody: string;
}

export interface FakeResponse {
  status?: number;
  json?: unknown;
  html?: string;
  text?: string;
  headers?: Record<string, string>;
}

export type FakeHandler = (req: FakeRequest) => FakeResponse | Promise<FakeResponse>;

/** Parses Stripe-style form bodies: a[b][0][c]=v becomes { a: { b: [{ c: 'v' }] } }. */
export function parseBracketForm(raw: string): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [key, value] of new URLSearchParams(raw)) {
    const parts = key.replace(/\]/g, '').split('[');
    let node: any = out;
    parts.forEach((part, i) => {
      const last = i === parts.length - 1;
      const nextIsIndex = !last && /^\d+$/.test(parts[i + 1]!);
      if (last) node[part] = value;
      else node = node[part] ??= nextIsIndex ? [] : {};
    });
  }
  return out;
}

/**
 * A tiny HTTP server on 127.0.0.1 with a route table ("METHOD /path/:param"), recording every call.
 * Provider fakes build on it.
 */
export class FakeServer {
  readonly calls: RecordedCall[] = [];
  private server: Server | null = null;
  private readonly routes: Array<{ method: string; pattern: RegExp; names: string[]; handler: FakeHandler }> = [];
  base = '';

  route(spec: string, handler: FakeHandler): this {
    const [method, path] = spec.split(' ') as [string, string];
    const names: string[] = [];
    const pattern = new RegExp(
      '^' +
        path.replace(/:([a-zA-Z_]+)/g, (_m, name: string) => {
          names.push(name);
          return '([^/]+)';
        }) +
        '$',
    );
    this.routes.push({ method, pattern, names, handler });
    return this;
  }

  callsTo(method: string, pathPrefix: string): RecordedCall[] {
    return this.calls.filter((c) => c.method === method && c.path.startsWith(pathPrefix));
  }

  async start(): Promise<this> {
    this.server = createServer((req, res) => void this.handle(req, res));
    await new Promise<void>((resolve) => this.server!.listen(0, '127.0.0.1', resolve));
    this.base = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
    return this;
  }

  async stop(): Promise<void> {
    if (!this.server) return;
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server!.close(() => resolve()));
    this.server = null;
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const rawBody = Buffer.concat(chunks).toString('utf8');
    const url = new URL(req.url ?? '/', this.base);
    const type = String(req.headers['content-type'] ?? '');
    let body: any = rawBody;
    if (type.includes('json') && rawBody) body = JSON.parse(rawBody);
    else if (type.includes('x-www-form-urlencoded')) body = parseBracketForm(rawBody);
    const call: RecordedCall = { method: req.method ?? 'GET', path: url.pathname, headers: req.headers, body };
    this.calls.push(call);
    for (const r of this.routes) {
      const m = r.method === call.method ? r.pattern.exec(url.pathname) : null;
      if (!m) continue;
      const params = Object.fromEntries(r.names.map((n, i) => [n, decodeURIComponent(m[i + 1]!)]));
      try {
        const out = await r.handler({ ...call, params, query: url.searchParams, rawBody });
        res.writeHead(out.status ?? 200, {
          'content-type': out.html !== undefined ? 'text/html; charset=utf-8' : out.text !== undefined ? 'text/plain' : 'application/json',
          ...out.headers,
        });
        res.end(out.html ?? out.text ?? (out.json === undefined ? '' : JSON.stringify(out.json)));
      } catch (err) {
        res.writeHead(500, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ error: { message: String(err) } }));
      }
      return;
    }
    res.writeHead(404, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ error: { type: 'invalid_request_error', message: `No route ${call.method} ${call.path}` } }));
  }
}
