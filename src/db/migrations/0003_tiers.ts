import type { Kysely } from 'kysely';
import { runStatements } from './run-statements.js';

// Tiers, their groups, group membership and the change-tracking table.
//
// A tier owns one group (category 'subscription_tier'); a user is a member of a tier through that group.
// The one-tier-per-user rule is the database's: tier memberships carry grm_sbt_subscription_tier_id, and
// a partial unique index allows one such row per user, so concurrent grants cannot leave two.
export async function up(db: Kysely<any>): Promise<void> {
  await runStatements(db, [
    `create table grp_groups (
      grp_group_id bigserial primary key,
      grp_name varchar(100) not null,
      grp_description text,
      grp_usr_user_id_created int4 references usr_users(usr_user_id),
      grp_category varchar(24),
      grp_create_time timestamp(6) not null default now(),
      grp_update_time timestamp(6) not null default now(),
      grp_delete_time timestamp(6)
    )`,
    // 'Tier already exists' is decided by this: one live tier group per name, even under concurrent creation.
    `create unique index grp_groups_tier_name_live on grp_groups (grp_name)
      where grp_category = 'subscription_tier' and grp_delete_time is null`,
    `create index grp_groups_category on grp_groups (grp_category)`,
    `create table sbt_subscription_tiers (
      sbt_subscription_tier_id bigserial primary key,
      sbt_grp_group_id int4 not null unique references grp_groups(grp_group_id),
      sbt_tier_level int4 not null,
      sbt_name varchar(100) not null,
      sbt_display_name varchar(100) not null,
      sbt_description text,
      sbt_features jsonb not null default '{}' check (jsonb_typeof(sbt_features) = 'object'),
      sbt_is_active bool not null default true,
      sbt_create_time timestamp(6) not null default now(),
      sbt_update_time timestamp(6) not null default now(),
      sbt_delete_time timestamp(6),
      unique (sbt_subscription_tier_id, sbt_grp_group_id)
    )`,
    `create unique index sbt_subscription_tiers_name_live on sbt_subscription_tiers (sbt_name) where sbt_delete_time is null`,
    `create table grm_group_members (
      grm_group_member_id bigserial primary key,
      grm_grp_group_id int8 not null references grp_groups(grp_group_id),
      grm_foreign_key_id int8 not null references usr_users(usr_user_id),
      grm_create_time timestamp(6) not null default now(),
      grm_assigned_time timestamp(6) not null default now(),
      grm_assignment_method varchar(10) not null default 'manual'
        check (grm_assignment_method in ('purchase', 'manual', 'other')),
      grm_subscription_status varchar(20)
        check (grm_subscription_status in ('active', 'cancelled', 'expired', 'refunded', 'replaced')),
      grm_sbt_subscription_tier_id int8,
      unique (grm_grp_group_id, grm_foreign_key_id),
      -- A tier membership names the tier that owns its group, and carries a subscription status.
      foreign key (grm_sbt_subscription_tier_id, grm_grp_group_id)
        references sbt_subscription_tiers (sbt_subscription_tier_id, sbt_grp_group_id),
      check (grm_sbt_subscription_tier_id is null or grm_subscription_status is not null)
    )`,
    // The database's guarantee of one tier per user; also the index the per-request tier read uses.
    `create unique index grm_group_members_one_tier on grm_group_members (grm_foreign_key_id)
      where grm_sbt_subscription_tier_id is not null`,
    `create index grm_group_members_user on grm_group_members (grm_foreign_key_id)`,
    `create table cht_change_tracking (
      cht_change_tracking_id bigserial primary key,
      cht_entity_type varchar(50) not null,
      cht_entity_id int8,
      cht_usr_user_id int4,
      cht_field_name varchar(100),
      cht_old_value text,
      cht_new_value text,
      cht_change_time timestamp(6) not null default now(),
      cht_change_reason varchar(50),
      cht_reference_type varchar(50),
      cht_reference_id int8,
      cht_changed_by_usr_user_id int4,
      cht_metadata text
    )`,
    `create index cht_change_tracking_user on cht_change_tracking (cht_usr_user_id, cht_change_time)`,
    `create index cht_change_tracking_entity on cht_change_tracking (cht_entity_type, cht_entity_id)`,
  ]);
}

export async function down(): Promise<void> {
  throw new Error('migrations are forward-only');
}
