import { Ajv2020 } from 'ajv/dist/2020.js';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { actionRegistry } from '../../src/actions/index.js';
import { coerceInput } from '../../src/actions/input.js';
import { inputObjectSchema } from '../../src/openapi/json-schema.js';
import { createTestApp, type TestApp } from '../helpers/app.js';

type Schema = Record<string, any>;
interface Op {
  path: string;
  method: string;
  op: Record<string, any>;
}
interface BuiltRequest {
  method: string;
  url: string;
  headers: Record<string, string>;
  payload?: string;
}

let t: TestApp;
let doc: Record<string, any>;
let credentials: Array<Record<string, string>>;
const ajv = new Ajv2020({ strict: false, validateFormats: false, allErrors: true });

/** Follows a local $ref within the document. */
function deref(node: any): any {
  while (node && typeof node.$ref === 'string') node = node.$ref.slice(2).split('/').reduce((o: any, k: string) => o[k.replace(/~1/g, '/').replace(/~0/g, '~')], doc);
  return node;
}

/** Values a schema accepts (the subset of JSON Schema the generator emits). */
function valid(schema: Schema | undefined, depth = 0): fc.Arbitrary<unknown> {
  const s = deref(schema) ?? {};
  if (s.allOf) return valid({ ...deref(s.allOf[0]), ...Object.fromEntries(Object.entries(s).filter(([k]) => k !== 'allOf')) }, depth);
  if (s.enum) return fc.constantFrom(...s.enum);
  if (s.const !== undefined) return fc.constant(s.const);
  const types: string[] = Array.isArray(s.type) ? s.type : s.type ? [s.type] : ['string'];
  return fc.oneof(
    ...types.map((type): fc.Arbitrary<unknown> => {
      switch (type) {
        case 'null':
          return fc.constant(null);
        case 'integer':
          return fc.integer({ min: s.minimum ?? -5, max: s.maximum ?? Math.max(5, (s.minimum ?? 0) + 5) });
        case 'number':
          return fc.double({ min: s.minimum ?? -100, max: s.maximum ?? 100, noNaN: true });
        case 'boolean':
          return fc.boolean();
        case 'array':
          return depth > 2 ? fc.constant([]) : fc.array(valid(s.items, depth + 1), { minLength: s.minItems ?? 0, maxLength: Math.max(s.minItems ?? 0, Math.min(s.maxItems ?? 3, 3)) });
        case 'object':
          return depth > 2 ? fc.constant({}) : objectOf(s, depth + 1);
        default:
          if (s.pattern === '^\\d{4}-\\d{2}-\\d{2}$' || s.format === 'date') return fc.date({ min: new Date('2000-01-01'), max: new Date('2040-01-01'), noInvalidDate: true }).map((d) => d.toISOString().slice(0, 10));
          if (s.pattern === '^\\d{4}-\\d{2}-\\d{2} \\d{2}:\\d{2}:\\d{2}$' || s['x-input-type'] === 'datetime') return fc.date({ min: new Date('2000-01-01'), max: new Date('2040-01-01'), noInvalidDate: true }).map((d) => d.toISOString().slice(0, 19).replace('T', ' '));
          if (s.format === 'email') return fc.emailAddress().filter((e) => e.length <= (s.maxLength ?? 64));
          if (s.pattern?.startsWith('^\\d{4}')) return fc.date({ min: new Date('2000-01-01'), max: new Date('2040-01-01'), noInvalidDate: true }).map((d) => d.toISOString().slice(0, 16));
          {
            const min = s.minLength ?? 0;
            const max = Math.max(min, Math.min(s.maxLength ?? 12, 12));
            // Trimmed, as the string types are read; a blank value is what 'required' refuses.
            return fc.string({ minLength: min, maxLength: max }).map((x) => x.trim()).filter((x) => [...x].length >= min);
          }
      }
    }),
  );
}

/** Anything at all, to probe the refusals. */
const junk = fc.oneof(fc.string({ maxLength: 8 }), fc.integer(), fc.boolean(), fc.constant(null), fc.constant({}), fc.array(fc.integer(), { maxLength: 2 }));

function objectOf(schema: Schema, depth: number, withJunk = true): fc.Arbitrary<Record<string, unknown>> {
  const props = Object.entries((schema.properties ?? {}) as Record<string, Schema>);
  const parts: Record<string, fc.Arbitrary<unknown>> = {};
  for (const [name, prop] of props) parts[name] = withJunk ? fc.oneof({ weight: 6, arbitrary: valid(prop, depth) }, { weight: 1, arbitrary: junk }) : valid(prop, depth);
  const required = new Set<string>(schema.required ?? []);
  return fc.record(parts, { requiredKeys: props.map(([n]) => n).filter((n) => required.has(n)) as never[] }).chain((value) =>
    // Now and then a required field goes missing.
    fc.boolean().map((drop) => {
      if (!drop || required.size === 0) return value;
      const copy = { ...value } as Record<string, unknown>;
      delete copy[[...required][0]!];
      return copy;
    }),
  );
}

function requestFor({ path, method, op }: Op): fc.Arbitrary<BuiltRequest> {
  const params = (op.parameters ?? []).map(deref) as Array<{ name: string; in: string; required?: boolean; schema: Schema }>;
  const pathParams = params.filter((p) => p.in === 'path');
  const queryParams = params.filter((p) => p.in === 'query');
  const json = op.requestBody?.content?.['application/json']?.schema;
  return fc.record({
    path: fc.record(Object.fromEntries(pathParams.map((p) => [p.name, p.schema.type === 'integer' ? fc.integer({ min: 1, max: 4 }) : fc.stringMatching(/^[A-Za-z0-9_-]{1,20}$/)]))),
    query: fc.record(Object.fromEntries(queryParams.map((p) => [p.name, fc.oneof({ weight: 4, arbitrary: valid(p.schema) }, { weight: 1, arbitrary: fc.string({ maxLength: 4 }) })])), { requiredKeys: [] }),
    body: json ? valid(json) : fc.constant(undefined),
    credential: fc.constantFrom(...credentials.keys()),
  }).map(({ path: values, query, body, credential }) => {
    const url = new URL(`http://x/api/v1${path.replace(/\{([^}]+)\}/g, (_, name: string) => encodeURIComponent(String(values[name])))}`);
    for (const [k, v] of Object.entries(query)) if (v !== null && v !== undefined) url.searchParams.set(k, typeof v === 'object' ? JSON.stringify(v) : String(v));
    const headers: Record<string, string> = { ...credentials[credential] };
    if (body !== undefined) headers['content-type'] = 'application/json';
    return { method: method.toUpperCase(), url: url.pathname + url.search, headers, ...(body !== undefined ? { payload: JSON.stringify(body) } : {}) };
  });
}

const pointer = (...parts: string[]) => '#/' + parts.map((p) => p.replace(/~/g, '~0').replace(/\//g, '~1')).join('/');

/** The compiled schema of a declared answer, by status and content type. */
const validators = new Map<string, ReturnType<typeof ajv.compile>>();
function responseValidator(o: Op, status: string, type: string) {
  const declared = o.op.responses[status];
  const base = declared.$ref ? declared.$ref : pointer('paths', o.path, o.method, 'responses', status);
  const ref = `openapi.json${base}/content/${type.replace(/\//g, '~1')}/schema`;
  let v = validators.get(ref);
  if (!v) validators.set(ref, (v = ajv.compile({ $ref: ref })));
  return v;
}

beforeAll(async () => {
  t = await createTestApp({
    settings: { drive_active: true, api_rate_limit_requests: 100000, api_auth_rate_limit_requests: 100000, api_upload_rate_limit_requests: 100000, api_device_link_rate_limit_requests: 100000 },
  });
  doc = (await t.request({ method: 'GET', url: '/api/openapi.json' })).json;
  ajv.addSchema(doc, 'openapi.json');
  const member = await t.keyHeaders({ permission: 4 });
  const superadmin = await t.staffHeaders({ userPermission: 10 });
  const readOnly = await t.keyHeaders({ permission: 1 });
  credentials = [{}, member.headers, superadmin.headers, readOnly.headers];
});
afterAll(async () => {
  await t?.close();
});

describe('the document and the input coercion agree', () => {
  it("accepts, in coerceInput, every action input the document's schema accepts", () => {
    const inputs = actionRegistry.available(t.services.plugins).filter((a) => a.descriptor.input);
    expect(inputs.length).toBeGreaterThan(10);
    let checked = 0;
    for (const action of inputs) {
      const schema = inputObjectSchema(action.descriptor.input);
      const validate = ajv.compile(schema);
      fc.assert(
        fc.property(objectOf({ ...schema, properties: schema.properties }, 0, false), (value) => {
          if (!validate(value)) return; // a dropped required field
          checked++;
          const result = coerceInput(action.descriptor.input, value);
          expect(result, `${action.name} ${JSON.stringify(value)}`).toMatchObject({ ok: true });
        }),
        { numRuns: 20 },
      );
    }
    // Most generated values are valid ones (a required field is dropped about half the time).
    expect(checked).toBeGreaterThan(inputs.length * 5);
  });
});

describe('the OpenAPI document against the real server', () => {
  it('declares every answer: requests built from its schemas get a declared status whose schema the body matches', async () => {
    const ops: Op[] = Object.entries(doc.paths as Record<string, Record<string, any>>).flatMap(([path, methods]) => Object.entries(methods).map(([method, op]) => ({ path, method, op })));
    const seen = new Map<string, number>();
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom(...ops).chain((o) => requestFor(o).map((req) => ({ o, req }))),
        async ({ o, req }) => {
          const res = await t.app.inject(req as never);
          const status = String(res.statusCode);
          const where = `${req.method} ${req.url} -> ${status} ${res.body.slice(0, 300)}`;
          expect(Object.keys(o.op.responses), where).toContain(status);
          const declared = deref(o.op.responses[status]);
          const type = String(res.headers['content-type'] ?? '').split(';')[0]!;
          expect(Object.keys(declared.content ?? {}), where).toContain(type);
          if (type === 'application/json') {
            const validate = responseValidator(o, status, type);
            expect(validate(JSON.parse(res.body)), `${where}\n${JSON.stringify(validate.errors)}`).toBe(true);
          }
          seen.set(status, (seen.get(status) ?? 0) + 1);
        },
      ),
      { numRuns: 400, seed: Number(process.env.FC_SEED ?? Date.now() % 2 ** 31) },
    );
    // The runs reached both successes and refusals.
    expect(seen.get('200') ?? 0).toBeGreaterThan(10);
    expect([...seen.keys()].filter((s) => s !== '200').length).toBeGreaterThan(2);
  });
});
