import type { Kysely } from 'kysely';
import { runStatements } from './run-statements.js';

// Ghost content import (DESIGN 16): which tier, post or page each Ghost object became, so a second import
// of the same export updates or leaves rows instead of duplicating them. gim_source keeps the Ghost
// fields no column holds (HTML of a post, feature image, tags, ...) so the content export gives them back.
export async function up(db: Kysely<any>): Promise<void> {
  await runStatements(db, [
    `create table gim_ghost_imports (
      gim_ghost_import_id bigserial primary key,
      gim_kind varchar(8) not null check (gim_kind in ('tier', 'post', 'page')),
      gim_ghost_id varchar(64) not null,
      gim_local_id int8 not null,
      gim_source jsonb not null default '{}',
      gim_create_time timestamp(6) not null default now(),
      gim_update_time timestamp(6) not null default now()
    )`,
    `create unique index gim_ghost_imports_once on gim_ghost_imports (gim_kind, gim_ghost_id)`,
    `create index gim_ghost_imports_local on gim_ghost_imports (gim_kind, gim_local_id)`,
  ]);
}
