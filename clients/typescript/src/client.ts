// A small typed fetch wrapper over the generated `paths` (src/schema.ts, from `npm run client`).
// It resolves with the envelope's data and throws a GatehouseError carrying status and errortype.
import type { components, paths } from './schema.js';

export type ErrorType = components['schemas']['ErrorType'];
type Method = 'get' | 'post' | 'put' | 'delete';
type Json<R> = R extends { content: { 'application/json': infer B } } ? B : never;
/** A request body: JSON, or the fields of a form-urlencoded one (CRUD writes take only forms). */
type BodyOf<R> = R extends { content: { 'application/json': infer B } } ? B : R extends { content: { 'application/x-www-form-urlencoded': infer F } } ? F : never;

/** The paths that answer a method. */
export type PathsWith<M extends Method> = { [P in keyof paths]: paths[P] extends Record<M, infer O> ? ([O] extends [never | undefined] ? never : P) : never }[keyof paths];
type Op<P extends keyof paths, M extends Method> = NonNullable<paths[P][M & keyof paths[P]]>;
type Params<P extends keyof paths, M extends Method> = Op<P, M> extends { parameters: infer X } ? X : never;
type PathParams<P extends keyof paths, M extends Method> = Params<P, M> extends { path: infer X } ? ([X] extends [never | undefined] ? never : X) : never;
type QueryParams<P extends keyof paths, M extends Method> = Params<P, M> extends { query?: infer X } ? X : never;
type Body<P extends keyof paths, M extends Method> = Op<P, M> extends { requestBody?: infer R } ? BodyOf<NonNullable<R>> : never;
/** What a successful call resolves with: the 200 envelope's data. */
export type Data<P extends keyof paths, M extends Method> = Op<P, M> extends { responses: { 200: infer R } } ? (Json<R> extends { data?: infer D } ? NonNullable<D> : never) : never;
/** The whole 200 envelope (collections carry num_results, page and numperpage). */
export type Envelope<P extends keyof paths, M extends Method> = Op<P, M> extends { responses: { 200: infer R } } ? Json<R> : never;

export type ActionName = PathsWith<'post'> extends infer P ? (P extends `/action/${infer N}` ? N : never) : never;
type ActionPath<N extends ActionName> = `/action/${N}` & keyof paths;
export type ActionInput<N extends ActionName> = Body<ActionPath<N>, 'post'>;

export interface RequestOptions<P extends keyof paths, M extends Method> {
  params?: PathParams<P, M>;
  query?: QueryParams<P, M>;
  body?: Body<P, M>;
  headers?: Record<string, string>;
}

export interface ClientOptions {
  /** The server's origin, e.g. https://gatehouse.example.com (the API lives under /api/v1). */
  baseUrl: string;
  publicKey?: string;
  secretKey?: string;
  /** client_app / client_version for the version handshake. */
  clientApp?: string;
  clientVersion?: string;
  fetch?: typeof fetch;
}

export class GatehouseError extends Error {
  constructor(
    readonly status: number,
    readonly errortype: ErrorType,
    message: string,
    readonly data: Record<string, unknown>,
    readonly validationErrors?: Record<string, string>,
  ) {
    super(message);
    this.name = 'GatehouseError';
  }
}

const dataOf = <T>(envelope: unknown): T => (envelope as { data: T }).data;

/**
 * A body as its operation takes it: a CRUD path (/{ClassName}, PascalCase) takes form-urlencoded fields
 * (null fields left out), every other operation JSON.
 */
function encodeBody(path: string, body: unknown): { type: string; text: string } {
  if (!/^\/[A-Z]/.test(path)) return { type: 'application/json', text: JSON.stringify(body) };
  const form = new URLSearchParams();
  for (const [k, v] of Object.entries(body as Record<string, unknown>)) if (v !== undefined && v !== null) form.set(k, String(v));
  return { type: 'application/x-www-form-urlencoded', text: form.toString() };
}

export class GatehouseClient {
  private keys: { publicKey: string; secretKey: string } | null;
  private readonly fetchImpl: typeof fetch;

  constructor(private readonly options: ClientOptions) {
    this.keys = options.publicKey && options.secretKey ? { publicKey: options.publicKey, secretKey: options.secretKey } : null;
    this.fetchImpl = options.fetch ?? fetch;
  }

  setKeys(publicKey: string, secretKey: string): void {
    this.keys = { publicKey, secretKey };
  }

  /** Any documented operation; resolves with the whole success envelope. */
  async call<M extends Method, P extends PathsWith<M>>(method: M, path: P, opts: RequestOptions<P, M> = {}): Promise<Envelope<P, M>> {
    const url = new URL(`/api/v1${String(path).replace(/\{([^}]+)\}/g, (_, name: string) => encodeURIComponent(String((opts.params as Record<string, unknown> | undefined)?.[name] ?? '')))}`, this.options.baseUrl);
    for (const [k, v] of Object.entries((opts.query ?? {}) as Record<string, unknown>)) if (v !== undefined && v !== null) url.searchParams.set(k, String(v));
    const headers: Record<string, string> = { accept: 'application/json', ...opts.headers };
    if (this.keys) Object.assign(headers, { public_key: this.keys.publicKey, secret_key: this.keys.secretKey });
    if (this.options.clientApp) headers.client_app = this.options.clientApp;
    if (this.options.clientVersion) headers.client_version = this.options.clientVersion;
    const body = opts.body === undefined ? undefined : encodeBody(String(path), opts.body);
    if (body) headers['content-type'] = body.type;
    const res = await this.fetchImpl(url, { method: method.toUpperCase(), headers, ...(body ? { body: body.text } : {}) });
    const envelope = (await res.json()) as Record<string, unknown>;
    if (!res.ok) {
      throw new GatehouseError(res.status, envelope.errortype as ErrorType, String(envelope.error ?? res.statusText), (envelope.data ?? {}) as Record<string, unknown>, envelope.validation_errors as Record<string, string> | undefined);
    }
    return envelope as Envelope<P, M>;
  }

  async get<P extends PathsWith<'get'>>(path: P, opts?: RequestOptions<P, 'get'>): Promise<Data<P, 'get'>> {
    return dataOf(await this.call('get', path, opts));
  }

  async post<P extends PathsWith<'post'>>(path: P, opts?: RequestOptions<P, 'post'>): Promise<Data<P, 'post'>> {
    return dataOf(await this.call('post', path, opts));
  }

  /** POST /action/{name} with the action's typed input; an Idempotency-Key makes a retry safe. */
  async action<N extends ActionName>(name: N, input: ActionInput<N>, opts: { idempotencyKey?: string } = {}): Promise<Data<ActionPath<N>, 'post'>> {
    const headers = opts.idempotencyKey ? { 'Idempotency-Key': opts.idempotencyKey } : undefined;
    return dataOf(await this.call('post', `/action/${name}` as ActionPath<N> & PathsWith<'post'>, { body: input, headers } as never));
  }

  /** Signs in with email and password; later calls carry the issued session key. */
  async login(email: string, password: string, deviceLabel?: string): Promise<Data<'/auth/login', 'post'>> {
    const data = await this.post('/auth/login', { body: { email, password, ...(deviceLabel ? { device_label: deviceLabel } : {}) } });
    this.setKeys(data.public_key, data.secret_key);
    return data;
  }
}
