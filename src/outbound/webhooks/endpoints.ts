import type { Kysely, Selectable } from 'kysely';
import type { DB, WebhookEndpointsTable } from '../../db/types.js';
import type { Clock } from '../../lib/clock.js';
import { formatTimestamp } from '../../lib/time.js';
import { businessError, validationError } from '../../http/errors.js';

/** An id that names nothing: the contract's business refusal (422 ActionError), as Drive answers one. */
const notFound = (message: string) => businessError(message, { reason: 'not_found' });
import { isOutboundEventType, OUTBOUND_EVENT_TYPES } from '../catalogue.js';
import { recordEvent } from '../events.js';
import { newWebhookSecret, SecretBox } from './secrets.js';
import { checkTarget, systemResolver, type Resolver } from './targets.js';

/** After a rotation the old secret keeps signing this long, so receivers can switch without losing events. */
export const ROTATION_OVERLAP_SECONDS = 24 * 3600;
export const ALLOW_PRIVATE_SETTING = 'webhook_allow_private_targets';

/** What managing endpoints reads: the database (the caller's transaction), the clock, and one setting. */
export interface EndpointDeps {
  db: Kysely<DB>;
  clock: Clock;
  settings: { bool(name: string): boolean };
  resolve?: Resolver;
}

export interface EndpointInput {
  url?: string | null;
  description?: string | null;
  event_types?: string[] | null;
  enabled?: boolean | null;
}

type EndpointRow = Selectable<WebhookEndpointsTable>;

/** An endpoint as the API, the page and the CLI show it: never its secret. */
export function publicEndpoint(row: EndpointRow) {
  return {
    endpoint_id: Number(row.whe_webhook_endpoint_id),
    url: row.whe_url,
    description: row.whe_description,
    event_types: row.whe_event_types,
    enabled: row.whe_enabled,
    disabled_reason: row.whe_disabled_reason,
    failing_since: row.whe_failing_since_time ? formatTimestamp(row.whe_failing_since_time) : null,
    previous_secret_expires_time: row.whe_previous_secret_expires_time ? formatTimestamp(row.whe_previous_secret_expires_time) : null,
    create_time: formatTimestamp(row.whe_create_time),
    update_time: formatTimestamp(row.whe_update_time),
  };
}
export type PublicEndpoint = ReturnType<typeof publicEndpoint>;

async function checkedUrl(deps: EndpointDeps, url: string): Promise<string> {
  const check = await checkTarget(url.trim(), deps.settings.bool(ALLOW_PRIVATE_SETTING), deps.resolve ?? systemResolver);
  if (!check.ok) throw validationError({ url: check.reason });
  return check.url.toString();
}

function checkedTypes(types: string[]): string[] {
  const unknown = types.filter((t) => !isOutboundEventType(t));
  if (unknown.length > 0) throw validationError({ event_types: `not in the catalogue: ${unknown.join(', ')} (known: ${OUTBOUND_EVENT_TYPES.join(', ')})` });
  return [...new Set(types)];
}

function checkedDescription(d: string): string {
  if (d.length > 255) throw validationError({ description: 'must be at most 255 characters' });
  return d;
}

export async function findEndpoint(db: Kysely<DB>, id: number): Promise<EndpointRow> {
  const row = await db.selectFrom('whe_webhook_endpoints').selectAll().where('whe_webhook_endpoint_id', '=', id).executeTakeFirst();
  if (!row) throw notFound(`No webhook endpoint ${id}`);
  return row;
}

export async function listEndpoints(db: Kysely<DB>): Promise<PublicEndpoint[]> {
  const rows = await db.selectFrom('whe_webhook_endpoints').selectAll().orderBy('whe_webhook_endpoint_id').execute();
  return rows.map(publicEndpoint);
}

/** Creates an endpoint; the answer carries its secret, which is never shown again. */
export async function createEndpoint(deps: EndpointDeps, input: EndpointInput): Promise<{ endpoint: PublicEndpoint; secret: string }> {
  if (!input.url) throw validationError({ url: 'is required' });
  const url = await checkedUrl(deps, input.url);
  const types = checkedTypes(input.event_types ?? []);
  const description = checkedDescription(input.description ?? '');
  const secret = newWebhookSecret();
  const box = await SecretBox.open(deps.db);
  const now = deps.clock.now();
  const row = await deps.db
    .insertInto('whe_webhook_endpoints')
    .values({
      whe_url: url,
      whe_description: description,
      whe_event_types: JSON.stringify(types),
      whe_enabled: input.enabled ?? true,
      whe_secret_sealed: box.seal(secret),
      whe_create_time: now,
      whe_update_time: now,
    })
    .returningAll()
    .executeTakeFirstOrThrow();
  return { endpoint: publicEndpoint(row), secret };
}

/** Changes what is given; enabling an endpoint clears why it was disabled and its failing streak. */
export async function updateEndpoint(deps: EndpointDeps, id: number, input: EndpointInput): Promise<PublicEndpoint> {
  const current = await findEndpoint(deps.db, id);
  const set: Record<string, unknown> = { whe_update_time: deps.clock.now() };
  if (input.url != null && input.url !== current.whe_url) set.whe_url = await checkedUrl(deps, input.url);
  if (input.description != null) set.whe_description = checkedDescription(input.description);
  if (input.event_types != null) set.whe_event_types = JSON.stringify(checkedTypes(input.event_types));
  if (input.enabled != null) {
    set.whe_enabled = input.enabled;
    if (input.enabled && !current.whe_enabled) Object.assign(set, { whe_disabled_reason: null, whe_failing_since_time: null });
    if (!input.enabled && current.whe_enabled) set.whe_disabled_reason = 'manual';
  }
  const row = await deps.db.updateTable('whe_webhook_endpoints').set(set).where('whe_webhook_endpoint_id', '=', id).returningAll().executeTakeFirstOrThrow();
  return publicEndpoint(row);
}

/** Deletes the endpoint with its deliveries and their attempt log. */
export async function deleteEndpoint(db: Kysely<DB>, id: number): Promise<void> {
  const res = await db.deleteFrom('whe_webhook_endpoints').where('whe_webhook_endpoint_id', '=', id).executeTakeFirst();
  if (Number(res.numDeletedRows) === 0) throw notFound(`No webhook endpoint ${id}`);
}

/** A new secret, shown once; the old one keeps signing beside it for 24 hours. */
export async function rotateEndpointSecret(deps: EndpointDeps, id: number): Promise<{ endpoint: PublicEndpoint; secret: string }> {
  const current = await findEndpoint(deps.db, id);
  const box = await SecretBox.open(deps.db);
  const secret = newWebhookSecret();
  const now = deps.clock.now();
  const row = await deps.db
    .updateTable('whe_webhook_endpoints')
    .set({
      whe_secret_sealed: box.seal(secret),
      whe_previous_secret_sealed: current.whe_secret_sealed,
      whe_previous_secret_expires_time: new Date(now.getTime() + ROTATION_OVERLAP_SECONDS * 1000),
      whe_update_time: now,
    })
    .where('whe_webhook_endpoint_id', '=', id)
    .returningAll()
    .executeTakeFirstOrThrow();
  return { endpoint: publicEndpoint(row), secret };
}

/** Writes a `test` event and one delivery of it, to this endpoint only, due at once. Needs a transaction. */
export async function sendTestEvent(deps: EndpointDeps, id: number): Promise<{ event_id: string }> {
  const endpoint = await findEndpoint(deps.db, id);
  const event = await recordEvent(deps.db, deps.clock, 'test', { endpoint_id: id, message: 'A test event from Gatehouse' });
  if (event.rowId === null) throw new Error('a test event is written at once, with its row id');
  const now = deps.clock.now();
  await deps.db
    .insertInto('whd_webhook_deliveries')
    .values({ whd_obe_outbound_event_id: event.rowId, whd_whe_webhook_endpoint_id: Number(endpoint.whe_webhook_endpoint_id), whd_next_attempt_time: now, whd_create_time: now, whd_update_time: now })
    .execute();
  return { event_id: event.id };
}

export interface RedeliverInput {
  event_id?: string | null;
  endpoint_id?: number | null;
  since?: Date | null;
}

/**
 * Makes deliveries due again, from a fresh schedule, with their event's id (so a receiver that already has
 * it can tell): one event's (to one endpoint, or every endpoint it went to; a delivery to an endpoint it
 * never went to is added), or every failure of one endpoint since a time (given up, or still retrying).
 */
export async function redeliver(deps: EndpointDeps, input: RedeliverInput): Promise<{ redelivered: number }> {
  const { db } = deps;
  const now = deps.clock.now();
  const reset = { whd_status: 'pending', whd_attempt_count: 0, whd_next_attempt_time: now, whd_claim_token: null, whd_update_time: now } as const;
  if (input.event_id) {
    const event = await db.selectFrom('obe_outbound_events').select('obe_outbound_event_id').where('obe_uid', '=', input.event_id).executeTakeFirst();
    if (!event) throw notFound(`No event ${input.event_id}`);
    if (input.endpoint_id) {
      await findEndpoint(db, input.endpoint_id);
      await db
        .insertInto('whd_webhook_deliveries')
        .values({ whd_obe_outbound_event_id: event.obe_outbound_event_id, whd_whe_webhook_endpoint_id: input.endpoint_id, whd_next_attempt_time: now, whd_create_time: now, whd_update_time: now })
        .onConflict((oc) => oc.columns(['whd_obe_outbound_event_id', 'whd_whe_webhook_endpoint_id']).doUpdateSet(reset))
        .execute();
      return { redelivered: 1 };
    }
    const res = await db.updateTable('whd_webhook_deliveries').set(reset).where('whd_obe_outbound_event_id', '=', event.obe_outbound_event_id).executeTakeFirst();
    return { redelivered: Number(res.numUpdatedRows) };
  }
  if (!input.endpoint_id) throw validationError({ event_id: 'give event_id, or endpoint_id with since' });
  if (!input.since) throw validationError({ since: 'is required with endpoint_id alone' });
  await findEndpoint(db, input.endpoint_id);
  const res = await db
    .updateTable('whd_webhook_deliveries')
    .set(reset)
    .where('whd_whe_webhook_endpoint_id', '=', input.endpoint_id)
    .where((eb) => eb.or([eb('whd_status', '=', 'failed'), eb.and([eb('whd_status', '=', 'pending'), eb('whd_attempt_count', '>', 0)])]))
    .where('whd_obe_outbound_event_id', 'in', (eb) => eb.selectFrom('obe_outbound_events').select('obe_outbound_event_id').where('obe_create_time', '>=', input.since!))
    .executeTakeFirst();
  return { redelivered: Number(res.numUpdatedRows) };
}

export const EVENT_PAGE_SIZE = 50;

/** Events newest first, with where each went; `cursor` is the next_cursor of the page before. */
export async function listEvents(db: Kysely<DB>, cursor: string | null | undefined, limit = EVENT_PAGE_SIZE) {
  const after = cursor ? Number(cursor) : null;
  if (cursor && (!Number.isInteger(after) || after! <= 0)) throw validationError({ cursor: 'is not a cursor this list gave' });
  let q = db.selectFrom('obe_outbound_events').select(['obe_outbound_event_id', 'obe_payload']).orderBy('obe_outbound_event_id', 'desc').limit(limit + 1);
  if (after) q = q.where('obe_outbound_event_id', '<', after);
  const rows = await q.execute();
  const page = rows.slice(0, limit);
  const ids = page.map((r) => r.obe_outbound_event_id);
  const deliveries = ids.length
    ? await db
        .selectFrom('whd_webhook_deliveries')
        .select(['whd_obe_outbound_event_id', 'whd_whe_webhook_endpoint_id', 'whd_status', 'whd_attempt_count', 'whd_last_status_code', 'whd_last_attempt_time', 'whd_next_attempt_time'])
        .where('whd_obe_outbound_event_id', 'in', ids)
        .execute()
    : [];
  const events = page.map((r) => ({
    ...(r.obe_payload as Record<string, unknown>),
    deliveries: deliveries
      .filter((d) => Number(d.whd_obe_outbound_event_id) === Number(r.obe_outbound_event_id))
      .map((d) => ({
        endpoint_id: Number(d.whd_whe_webhook_endpoint_id),
        status: d.whd_status,
        attempt_count: d.whd_attempt_count,
        last_status_code: d.whd_last_status_code,
        last_attempt_time: d.whd_last_attempt_time ? formatTimestamp(d.whd_last_attempt_time) : null,
      })),
  }));
  const nextCursor = rows.length > limit ? String(page[page.length - 1]!.obe_outbound_event_id) : null;
  return { events, next_cursor: nextCursor };
}

/** The attempt log of one endpoint, newest first. */
export async function endpointAttempts(db: Kysely<DB>, endpointId: number, limit = 100) {
  const rows = await db
    .selectFrom('wha_webhook_attempts')
    .innerJoin('whd_webhook_deliveries', 'whd_webhook_delivery_id', 'wha_whd_webhook_delivery_id')
    .innerJoin('obe_outbound_events', 'obe_outbound_event_id', 'whd_obe_outbound_event_id')
    .select(['wha_webhook_attempt_id', 'wha_attempt_time', 'wha_status_code', 'wha_duration_ms', 'wha_response_body', 'wha_error', 'obe_uid', 'obe_type', 'whd_status', 'whd_webhook_delivery_id'])
    .where('wha_whe_webhook_endpoint_id', '=', endpointId)
    .orderBy('wha_webhook_attempt_id', 'desc')
    .limit(limit)
    .execute();
  return rows.map((r) => ({
    attempt_time: formatTimestamp(r.wha_attempt_time as Date),
    event_id: r.obe_uid,
    type: r.obe_type,
    status_code: r.wha_status_code,
    duration_ms: r.wha_duration_ms,
    response: r.wha_response_body,
    error: r.wha_error,
    delivery_status: r.whd_status,
  }));
}
