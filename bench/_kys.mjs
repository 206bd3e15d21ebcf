import { Kysely, PostgresDialect, sql } from 'kysely';
const db = new Kysely({ dialect: new PostgresDialect({ pool: {} }) });
const key = (publicKey) => db.selectFrom('apk_api_keys').innerJoin('usr_users', 'usr_user_id', 'apk_usr_user_id')
  .leftJoin('grm_group_members', (join) => join.onRef('grm_foreign_key_id', '=', 'usr_user_id').on('grm_sbt_subscription_tier_id', 'is not', null))
  .leftJoin('sbt_subscription_tiers', (join) => join.onRef('sbt_subscription_tier_id', '=', 'grm_sbt_subscription_tier_id').on('sbt_delete_time', 'is', null).on('sbt_is_active', '=', true))
  .select(['apk_api_key_id', 'apk_type', 'apk_permission', 'apk_public_key', 'apk_secret_hash', 'apk_is_active', 'apk_start_time', 'apk_expires_time', 'apk_last_used_time', 'apk_ip_restriction', 'apk_delete_time', 'usr_user_id', 'usr_email', 'usr_first_name', 'usr_last_name', 'usr_nickname', 'usr_permission', 'usr_delete_time', 'usr_is_disabled', 'sbt_subscription_tier_id', 'sbt_name', 'sbt_display_name', 'sbt_tier_level', 'sbt_features'])
  .where('apk_public_key', '=', publicKey).compile();
const cols = ['pst_post_id','pst_usr_user_id','pst_title','pst_body','pst_is_published','pst_published_time','pst_create_time','pst_update_time','pst_delete_time','pst_link','pst_sbt_subscription_tier_id','pst_preview','pst_x'];
const list = () => db.selectFrom('pst_posts').where('pst_delete_time', 'is', null).where((eb) => eb.and([eb('pst_is_published', '=', true), eb.or([eb('pst_published_time', 'is', null), eb('pst_published_time', '<=', new Date())])]))
  .select(cols).select(sql`count(*) over ()`.as('__n')).orderBy('pst_post_id', 'asc').limit(20).offset(0).compile();
const simple = () => db.selectFrom('bench_items').selectAll().where('id', '=', 1).compile();
for (const [l, f] of [['key', key], ['list', list], ['simple', simple], ['key', key], ['list', list], ['simple', simple]]) {
  const t = performance.now(); for (let i = 0; i < 20000; i++) f('k'); console.log(l, ((performance.now() - t) * 1000 / 20000).toFixed(1), 'us');
}
