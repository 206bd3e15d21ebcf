import { PGlite } from '@electric-sql/pglite';
import { mkdtempSync } from 'node:fs';
const pg = await PGlite.create(mkdtempSync('/tmp/rqlb2-'));
await pg.exec(`create table rql_request_logs (
      rql_request_log_id bigserial primary key, rql_feature varchar(50), rql_action varchar(100), rql_ip_address varchar(45),
      rql_usr_user_id int4, rql_api_key_type varchar(10), rql_was_success bool not null default true, rql_status_code int2,
      rql_error_type varchar(50), rql_note varchar(255), rql_response_ms int4, rql_create_time timestamp(6) not null default now());
 create index rql_request_logs_time on rql_request_logs (rql_create_time)`);
const N = 200, B = 50;
const cols = 'rql_feature, rql_action, rql_ip_address, rql_usr_user_id, rql_api_key_type, rql_was_success, rql_status_code, rql_error_type, rql_response_ms, rql_create_time';
const row = () => ['unknown', null, '127.0.0.1', null, null, false, 404, 'NotFound', 0, new Date()];
async function time(label, fn) {
  for (let i = 0; i < 5; i++) await fn();
  const c0 = process.cpuUsage();
  for (let i = 0; i < B; i++) await fn();
  const c = process.cpuUsage(c0);
  console.log(label.padEnd(12), 'us/row cpu', ((c.user + c.system) / (N * B)).toFixed(1));
}
await time('unnest', async () => {
  const rows = Array.from({ length: N }, row);
  const colArr = (i) => rows.map((r) => r[i]);
  await pg.query(`insert into rql_request_logs (${cols}) select * from unnest($1::varchar[],$2::varchar[],$3::varchar[],$4::int4[],$5::varchar[],$6::bool[],$7::int2[],$8::varchar[],$9::int4[],$10::timestamp[])`,
    [0,1,2,3,4,5,6,7,8,9].map(colArr));
});
const esc = (v) => v === null ? '\\N' : v instanceof Date ? v.toISOString().replace('T', ' ').replace('Z', '') : typeof v === 'boolean' ? (v ? 't' : 'f') : String(v).replace(/[\\\t\n\r]/g, (c) => ({ '\\': '\\\\', '\t': '\\t', '\n': '\\n', '\r': '\\r' })[c]);
await time('copy', async () => {
  const rows = Array.from({ length: N }, row);
  const text = rows.map((r) => r.map(esc).join('\t')).join('\n') + '\n';
  await pg.query(`copy rql_request_logs (${cols}) from '/dev/blob'`, [], { blob: new Blob([text]) });
});
await time('exec-values', async () => {
  const rows = Array.from({ length: N }, row);
  const lit = (v) => v === null ? 'null' : v instanceof Date ? `'${v.toISOString()}'` : typeof v === 'string' ? `'${v.replace(/'/g, "''")}'` : String(v);
  await pg.exec(`insert into rql_request_logs (${cols}) values ${rows.map((r) => `(${r.map(lit).join(',')})`).join(',')}`);
});
await time('noop-query', async () => { await pg.query('select 1'); });
console.log((await pg.query('select count(*) from rql_request_logs')).rows);
await pg.exec('drop index rql_request_logs_time');
await time('copy-noidx', async () => {
  const rows = Array.from({ length: N }, row);
  const text = rows.map((r) => r.map(esc).join('\t')).join('\n') + '\n';
  await pg.query(`copy rql_request_logs (${cols}) from '/dev/blob'`, [], { blob: new Blob([text]) });
});
await pg.exec('alter table rql_request_logs set unlogged');
await time('copy-unlog', async () => {
  const rows = Array.from({ length: N }, row);
  const text = rows.map((r) => r.map(esc).join('\t')).join('\n') + '\n';
  await pg.query(`copy rql_request_logs (${cols}) from '/dev/blob'`, [], { blob: new Blob([text]) });
});
await time('copy1000', async () => {
  const rows = Array.from({ length: 1000 }, row);
  const text = rows.map((r) => r.map(esc).join('\t')).join('\n') + '\n';
  await pg.query(`copy rql_request_logs (${cols}) from '/dev/blob'`, [], { blob: new Blob([text]) });
});
