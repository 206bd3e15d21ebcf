import fc from 'fast-check';
import { actionRegistry } from '../../src/actions/index.js';
import { pluginModules } from '../../src/boot/plugins.js';
import { models } from '../../src/models/index.js';

// A fuzzer built from the registries (issue 31): random verbs, paths (actions, models, surfaces, pages and
// garbage), headers, content types and encodings, bodies (huge, deeply nested, malformed, wrongly typed,
// invalid UTF-8, duplicate keys). Each generated request is checked by checkResponse.

export interface FuzzRequest {
  method: string;
  url: string;
  headers: Record<string, string>;
  body: Buffer | undefined;
}

export interface FuzzResponse {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: string;
}

export interface FuzzKeys {
  /** Valid credentials (member, staff) the fuzzer mixes in, so authenticated paths are reached too. */
  principals: Array<Record<string, string>>;
}

/** Every action's name with its input field names (wrongly typed values are then generated per field). */
// Plugins' actions and models join the registries when their modules load.
await pluginModules();
const ACTIONS = actionRegistry.available({ isActive: () => true }).map((a) => ({ name: a.name, fields: a.descriptor.input ? Object.keys(a.descriptor.input) : [] }));
const MODELS = models.all().map((m) => m.className);
const FIXED_PATHS = [
  '/api/v1/actions',
  '/api/v1/auth/login',
  '/api/v1/auth/session',
  '/api/v1/auth/logout',
  '/api/v1/auth/web_session',
  '/api/v1/auth/device_link',
  '/api/v1/app/navigation',
  '/api/v1/webhooks/card_processor',
  '/api/v1/webhooks/wallet_provider',
  '/api/v1/webhooks/ios_store',
  '/api/v1/webhooks/android_store',
  '/api/v1/webhooks/nope',
  '/api/v1/',
  '/api/v1',
  '/api/v2/actions',
  '/',
  '/login',
  '/drive',
  '/pricing',
  '/account',
  '/admin',
  '/admin/settings/subscriptions',
  '/cart',
];

const METHODS = ['GET', 'POST', 'PUT', 'DELETE', 'PATCH', 'OPTIONS', 'HEAD', 'TRACE', 'PROPFIND', 'get'];

/** Strings that break naive code: SQL, paths, escapes, unicode edge cases, numbers as text. */
const NASTY = [
  "' OR 1=1 --",
  '"; drop table usr_users; --',
  '../../../../etc/passwd',
  '%00',
  '\u0000',
  '\uD800',
  '\uFFFF',
  '𝕏'.repeat(50),
  '1e309',
  '-0',
  'NaN',
  '9007199254740993',
  '-9223372036854775809',
  '2026-02-30 25:61:61',
  '<script>alert(1)</script>',
  '${7*7}',
  '__proto__',
  'constructor',
  ' ',
  '',
];

const nasty = fc.constantFrom(...NASTY);
/** Percent-encodes every byte of the string's UTF-8 (lone surrogates become U+FFFD, never a throw). */
const pct = (s: string) => [...Buffer.from(s, 'utf8')].map((b) => (/[A-Za-z0-9_.~-]/.test(String.fromCharCode(b)) ? String.fromCharCode(b) : `%${b.toString(16).padStart(2, '0')}`)).join('');
const pathSegment = fc.oneof(
  fc.constantFrom('1', '0', '-1', '999999999999999999999', 'abc', '%2e%2e', '%ff', '%', '..', 'null', '1.5', '0x10'),
  fc.string({ maxLength: 12 }).map(pct),
  nasty.map(pct),
);

const path: fc.Arbitrary<string> = fc.oneof(
  { weight: 4, arbitrary: fc.constantFrom(...ACTIONS.map((a) => a.name)).map((n) => `/api/v1/action/${n}`) },
  { weight: 3, arbitrary: fc.tuple(fc.constantFrom(...MODELS), fc.option(pathSegment)).map(([m, id]) => (id === null ? `/api/v1/${m}s` : `/api/v1/${m}/${id}`)) },
  { weight: 2, arbitrary: fc.constantFrom(...FIXED_PATHS) },
  { weight: 1, arbitrary: pathSegment.map((s) => `/api/v1/drive_upload/${s}`) },
  { weight: 1, arbitrary: fc.constantFrom(...ACTIONS.map((a) => a.name)).map((n) => `/api/v1/form/${n}`) },
  { weight: 1, arbitrary: fc.array(pathSegment, { minLength: 1, maxLength: 4 }).map((s) => `/api/v1/${s.join('/')}`) },
  { weight: 1, arbitrary: fc.array(pathSegment, { minLength: 1, maxLength: 3 }).map((s) => `/${s.join('/')}`) },
);

const query = fc.option(
  fc.array(fc.tuple(fc.oneof(fc.constantFrom('page', 'numperpage', 'sort', 'filter', 'id', 'q', 'limit'), fc.string({ maxLength: 8 })), fc.oneof(pathSegment, nasty.map(pct))), { maxLength: 5 })
    .map((pairs) => `?${pairs.map(([k, v]) => `${pct(k)}=${v}`).join('&')}`),
  { nil: '' },
);

/** Values of every JSON type, including the wrong ones for any field. */
const anyValue: fc.Arbitrary<unknown> = fc.oneof(
  fc.constant(null),
  fc.boolean(),
  fc.integer(),
  fc.double(),
  fc.constantFrom(2 ** 53 + 1, -(2 ** 63), 1e308),
  fc.string({ maxLength: 40 }),
  nasty,
  fc.array(fc.integer(), { maxLength: 4 }),
  fc.dictionary(fc.string({ maxLength: 6 }), fc.string({ maxLength: 6 }), { maxKeys: 3 }),
);

function nested(depth: number): string {
  return '['.repeat(depth) + ']'.repeat(depth);
}

function nestedObject(depth: number): string {
  return '{"a":'.repeat(depth) + '1' + '}'.repeat(depth);
}

type Body = { type: string | undefined; bytes: Buffer; encoding?: string };

const json = (v: unknown): Body => ({ type: 'application/json', bytes: Buffer.from(JSON.stringify(v)) });

/** A body for a path: often the action's own fields with random (wrongly typed) values. */
function bodyFor(url: string): fc.Arbitrary<Body | undefined> {
  const action = ACTIONS.find((a) => url === `/api/v1/action/${a.name}`);
  const fieldsBody = action && action.fields.length > 0
    ? fc.array(fc.tuple(fc.constantFrom(...action.fields), anyValue), { maxLength: action.fields.length + 2 }).map((kv) => json(Object.fromEntries(kv)))
    : fc.constant(json({}));
  return fc.oneof(
    { weight: 4, arbitrary: fieldsBody },
    { weight: 1, arbitrary: fc.constant(undefined) },
    { weight: 2, arbitrary: fc.jsonValue({ maxDepth: 3 }).map(json) },
    { weight: 1, arbitrary: fc.integer({ min: 100, max: 3000 }).map((d) => ({ type: 'application/json', bytes: Buffer.from(fc.sample(fc.constantFrom(nested(d), nestedObject(d)), 1)[0]!) })) },
    { weight: 1, arbitrary: fc.integer({ min: 100_000, max: 3_000_000 }).map((n) => json({ name: 'x'.repeat(n) })) },
    { weight: 1, arbitrary: fc.integer({ min: 1000, max: 20_000 }).map((n) => json(Array.from({ length: n }, (_, i) => i))) },
    { weight: 1, arbitrary: fc.constantFrom('{"a":1,"a":2}', '{"upload_token":"x","upload_token":{"$ne":1}}', '{', '{"a":}', 'null', '"str"', '[]', '{"__proto__":{"admin":true}}', '{"constructor":{"prototype":{"x":1}}}', '\ufeff{}', '{"a":1}garbage').map((s) => ({ type: 'application/json', bytes: Buffer.from(s) })) },
    { weight: 1, arbitrary: fc.uint8Array({ minLength: 1, maxLength: 200 }).map((b) => ({ type: 'application/json', bytes: Buffer.concat([Buffer.from('{"name":"'), Buffer.from([0xc3, 0x28, 0xff, 0xfe]), Buffer.from(b), Buffer.from('"}')]) })) },
    { weight: 1, arbitrary: fc.tuple(fc.constantFrom('application/x-www-form-urlencoded', 'text/plain', 'application/octet-stream', 'multipart/form-data; boundary=xyz', 'multipart/form-data', 'application/json; charset=utf-16', 'application/json; charset=latin1', 'application/xml', '*/*', '', 'application/json;;;'), fc.uint8Array({ maxLength: 300 })).map(([type, b]) => ({ type, bytes: Buffer.from(b) })) },
    { weight: 1, arbitrary: fc.constantFrom('gzip', 'deflate', 'br', 'identity', 'x-unknown').map((encoding) => ({ type: 'application/json', bytes: Buffer.from('{"not":"compressed"}'), encoding })) },
    { weight: 1, arbitrary: fc.constantFrom('a=1&a=2&b[]=3&c[d]=4', '%ff%fe=%00', 'usr_email=' + '%41'.repeat(5000)).map((s) => ({ type: 'application/x-www-form-urlencoded', bytes: Buffer.from(s) })) },
  );
}

function headersFor(keys: FuzzKeys): fc.Arbitrary<Record<string, string>> {
  const principal = fc.oneof(
    { weight: 2, arbitrary: fc.constant({}) },
    { weight: 3, arbitrary: keys.principals.length > 0 ? fc.constantFrom(...keys.principals) : fc.constant({}) },
    { weight: 1, arbitrary: fc.record({ public_key: fc.oneof(fc.string({ maxLength: 70 }), fc.constant('key_' + 'a'.repeat(40))), secret_key: fc.string({ maxLength: 90 }) }) },
    { weight: 1, arbitrary: fc.record({ authorization: fc.oneof(fc.constant('Bearer x'), fc.string({ maxLength: 40 }).map((s) => `Basic ${s}`)) }) },
  );
  const extra = fc.dictionary(
    fc.constantFrom('idempotency-key', 'content-range', 'x-service-csrf', 'cookie', 'accept', 'accept-encoding', 'x-forwarded-for', 'x-forwarded-proto', 'range', 'if-none-match', 'origin', 'x-request-id'),
    fc.oneof(fc.string({ maxLength: 30 }), nasty, fc.constant('x'.repeat(300)), fc.constant('bytes 0-10/5'), fc.constant('bytes=-1-')),
    { maxKeys: 3 },
  );
  return fc.tuple(principal, extra).map(([p, e]) => ({ ...e, ...p }));
}

/** One random request, built from the registries. */
export function fuzzRequest(keys: FuzzKeys): fc.Arbitrary<FuzzRequest> {
  return fc
    .tuple(fc.constantFrom(...METHODS), path, query)
    .chain(([method, url, q]) =>
      fc.tuple(fc.constant(method), fc.constant(url + q), bodyFor(url), headersFor(keys)).map(([m, u, body, headers]) => {
        const h: Record<string, string> = { ...headers };
        const sendsBody = body !== undefined && m !== 'GET' && m !== 'HEAD';
        if (sendsBody && body.type !== undefined && body.type !== '') h['content-type'] = body.type;
        if (sendsBody && body.encoding) h['content-encoding'] = body.encoding;
        return { method: m, url: u, headers: h, body: sendsBody ? body.bytes : undefined };
      }),
    );
}

/** What no body may show: a stack trace, SQL or a server file path. */
const LEAKS: Array<[string, RegExp]> = [
  ['stack trace', /\n\s+at\s+\S+.*\(?\S+:\d+:\d+\)?/],
  ['stack trace', /\bat (?:async )?[\w$.<>]+ \((?:file:\/\/|\/|node:)/],
  ['file path', /(?:\/work\/|\/home\/|\/tmp\/gh-|\/src\/[\w/-]+\.ts|\/dist\/[\w/-]+\.js|node_modules\/)/],
  ['SQL', /\b(?:select\s+[\w*"., ]+\s+from\s+\w+_\w+|insert\s+into\s+\w+_\w+|update\s+\w+_\w+\s+set\b|syntax error at or near|violates (?:unique|foreign key|check|not-null) constraint|relation "\w+" does not exist|column "\w+" (?:does not exist|of relation))/i],
];

/** The checks on one answer; returns what is wrong ('' when all is well). */
export function checkResponse(req: FuzzRequest, res: FuzzResponse): string {
  const where = `${req.method} ${req.url.slice(0, 200)}`;
  if (res.status >= 500) return `${where}: ${res.status} ${res.body.slice(0, 500)}`;
  for (const [what, re] of LEAKS) {
    const m = re.exec(res.body);
    if (m) return `${where}: ${what} in the body: ${JSON.stringify(m[0].slice(0, 200))}`;
  }
  // Dot segments resolve as any client resolves them: /api/v1/../x is the page /x.
  let pathname: string;
  try {
    pathname = new URL(req.url, 'http://fuzz.invalid').pathname;
  } catch {
    pathname = req.url.split('?')[0]!;
  }
  if (pathname.startsWith('/api/v1/') && req.method.toUpperCase() !== 'HEAD' && res.status !== 304) {
    let body: any;
    try {
      body = JSON.parse(res.body);
    } catch {
      return `${where}: ${res.status}, not a JSON envelope: ${res.body.slice(0, 200)}`;
    }
    if (body === null || typeof body !== 'object' || body.api_version !== '1.0') return `${where}: ${res.status}, no envelope: ${res.body.slice(0, 200)}`;
    const ok = res.status < 400;
    if (ok && !('data' in body)) return `${where}: ${res.status} success without data`;
    if (!ok && (typeof body.errortype !== 'string' || typeof body.error !== 'string' || typeof body.data !== 'object')) {
      return `${where}: ${res.status} error without errortype/error/data: ${res.body.slice(0, 200)}`;
    }
  }
  return '';
}

/** The seed of a run: FUZZ_SEED when set (to reproduce), else a new one; printed either way. */
export function fuzzSeed(label: string): number {
  const seed = process.env.FUZZ_SEED ? Number(process.env.FUZZ_SEED) : Math.floor(Math.random() * 2 ** 31);
  console.log(`${label}: fast-check seed ${seed} (reproduce with FUZZ_SEED=${seed})`);
  return seed;
}
