import type { Kysely } from 'kysely';
import { runStatements } from './run-statements.js';

// Native-app links: one-time web-session bridge tokens and device-link ceremonies. Tokens are stored as
// SHA-256 only. A device link holds no credential: the session key is minted at the first poll after
// approval, so nothing secret waits in the table.
export async function up(db: Kysely<any>): Promise<void> {
  await runStatements(db, [
    `create table wsb_web_session_bridges (
      wsb_web_session_bridge_id bigserial primary key,
      wsb_token_hash char(64) not null unique,
      wsb_usr_user_id int8 not null references usr_users(usr_user_id),
      wsb_apk_api_key_id int8 not null references apk_api_keys(apk_api_key_id),
      wsb_target varchar(2048) not null,
      wsb_create_time timestamp(6) not null default now(),
      wsb_expires_time timestamp(6) not null,
      wsb_used_time timestamp(6)
    )`,
    `create index wsb_web_session_bridges_expires on wsb_web_session_bridges (wsb_expires_time)`,
    `create table dvl_device_links (
      dvl_device_link_id bigserial primary key,
      dvl_poll_token_hash char(64) not null unique,
      dvl_link_code varchar(16) not null,
      dvl_device_name varchar(100) not null,
      dvl_platform varchar(10) not null check (dvl_platform in ('macos', 'windows', 'linux')),
      dvl_device_pubkey varchar(64),
      dvl_status varchar(10) not null default 'pending' check (dvl_status in ('pending', 'approved', 'denied', 'delivered')),
      dvl_usr_user_id int8 references usr_users(usr_user_id),
      dvl_apk_api_key_id int8 references apk_api_keys(apk_api_key_id),
      dvl_create_time timestamp(6) not null default now(),
      dvl_expires_time timestamp(6) not null,
      dvl_decided_time timestamp(6),
      dvl_delivered_time timestamp(6)
    )`,
    `create unique index dvl_device_links_live_code on dvl_device_links (dvl_link_code) where dvl_status = 'pending'`,
    `create index dvl_device_links_expires on dvl_device_links (dvl_expires_time)`,
  ]);
}

export async function down(): Promise<void> {
  throw new Error('migrations are forward-only');
}
