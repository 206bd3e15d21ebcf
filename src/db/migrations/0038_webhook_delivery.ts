import type { Kysely } from 'kysely';
import { runStatements } from './run-statements.js';

// Outbound webhooks (DESIGN 15): endpoints, one delivery per (event, endpoint) fanned out in the event's
// transaction, and the log of every attempt (kept 30 days). The endpoints' signing secrets are sealed with
// the key in whk_webhook_keys (src/outbound/webhooks/secrets.ts), never stored or exported in the clear.
export async function up(db: Kysely<any>): Promise<void> {
  await runStatements(db, [
    `create table whk_webhook_keys (
      whk_webhook_key_id int4 primary key check (whk_webhook_key_id = 1),
      whk_key varchar(64) not null,
      whk_create_time timestamp(6) not null default now()
    )`,
    `create table whe_webhook_endpoints (
      whe_webhook_endpoint_id serial primary key,
      whe_url varchar(2048) not null,
      whe_description varchar(255) not null default '',
      whe_event_types jsonb not null default '[]',
      whe_enabled boolean not null default true,
      whe_secret_sealed varchar(255) not null,
      whe_previous_secret_sealed varchar(255),
      whe_previous_secret_expires_time timestamp(6),
      whe_failing_since_time timestamp(6),
      whe_disabled_reason varchar(64),
      whe_create_time timestamp(6) not null default now(),
      whe_update_time timestamp(6) not null default now()
    )`,
    `create table whd_webhook_deliveries (
      whd_webhook_delivery_id bigserial primary key,
      whd_obe_outbound_event_id int8 not null references obe_outbound_events (obe_outbound_event_id) on delete cascade,
      whd_whe_webhook_endpoint_id int4 not null references whe_webhook_endpoints (whe_webhook_endpoint_id) on delete cascade,
      whd_status varchar(16) not null default 'pending',
      whd_attempt_count int4 not null default 0,
      whd_next_attempt_time timestamp(6) not null,
      whd_claim_token varchar(40),
      whd_last_attempt_time timestamp(6),
      whd_last_status_code int4,
      whd_create_time timestamp(6) not null default now(),
      whd_update_time timestamp(6) not null default now()
    )`,
    `create unique index whd_webhook_deliveries_event_endpoint on whd_webhook_deliveries (whd_obe_outbound_event_id, whd_whe_webhook_endpoint_id)`,
    `create index whd_webhook_deliveries_due on whd_webhook_deliveries (whd_next_attempt_time) where whd_status = 'pending'`,
    `create index whd_webhook_deliveries_endpoint on whd_webhook_deliveries (whd_whe_webhook_endpoint_id, whd_webhook_delivery_id)`,
    `create table wha_webhook_attempts (
      wha_webhook_attempt_id bigserial primary key,
      wha_whd_webhook_delivery_id int8 not null references whd_webhook_deliveries (whd_webhook_delivery_id) on delete cascade,
      wha_whe_webhook_endpoint_id int4 not null,
      wha_attempt_time timestamp(6) not null,
      wha_status_code int4,
      wha_duration_ms int4 not null,
      wha_response_body varchar(1024),
      wha_error varchar(255)
    )`,
    `create index wha_webhook_attempts_endpoint on wha_webhook_attempts (wha_whe_webhook_endpoint_id, wha_webhook_attempt_id)`,
    `create index wha_webhook_attempts_delivery on wha_webhook_attempts (wha_whd_webhook_delivery_id)`,
    `create index wha_webhook_attempts_time on wha_webhook_attempts (wha_attempt_time)`,
  ]);
}
