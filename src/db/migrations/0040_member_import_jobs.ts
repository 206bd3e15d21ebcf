import type { Kysely } from 'kysely';
import { runStatements } from './run-statements.js';

// Member CSV imports (DESIGN 16): one row per run of an uploaded file, with its progress (bytes read,
// rows by outcome) for the admin page's progress bar, and its report when it ends.
export async function up(db: Kysely<any>): Promise<void> {
  await runStatements(db, [
    `create table mij_member_import_jobs (
      mij_member_import_job_id bigserial primary key,
      mij_fil_file_id int8 not null,
      mij_usr_user_id int8 not null,
      mij_dry_run bool not null default false,
      mij_status varchar(10) not null default 'queued' check (mij_status in ('queued', 'running', 'done', 'failed')),
      mij_bytes_total int8 not null default 0,
      mij_bytes_done int8 not null default 0,
      mij_rows int4 not null default 0,
      mij_created int4 not null default 0,
      mij_updated int4 not null default 0,
      mij_unchanged int4 not null default 0,
      mij_errors int4 not null default 0,
      mij_report jsonb,
      mij_error text,
      mij_create_time timestamp(6) not null default now(),
      mij_start_time timestamp(6),
      mij_end_time timestamp(6),
      mij_update_time timestamp(6) not null default now()
    )`,
    `create index mij_member_import_jobs_status on mij_member_import_jobs (mij_status, mij_member_import_job_id)`,
  ]);
}
