import { PGlite } from '@electric-sql/pglite';
import { mkdtempSync } from 'node:fs';
const mk = async (idx, pk, extra = '') => { const pg = await PGlite.create(mkdtempSync('/tmp/rqlb3-'));
await pg.exec(`create table rql_request_logs (
      rql_request_log_id ${pk ? 'bigserial primary key' : 'bigint'}, rql_feature varchar(50), rql_action varchar(100), rql_ip_address varchar(45),
      rql_usr_user_id int4, rql_api_key_type varchar(10), rql_was_success bool not null default true, rql_status_code int2,
      rql_error_type varchar(50), rql_note varchar(255), rql_response_ms int4, rql_create_time timestamp(6) not null default now());` + (idx ? 'create index rql_request_logs_time on rql_request_logs (rql_create_time);' : '') + extra);
 return pg; };
const cols = 'rql_feature, rql_action, rql_ip_address, rql_usr_user_id, rql_api_key_type, rql_was_success, rql_status_code, rql_error_type, rql_response_ms, rql_create_time';
const row = () => ['unknown', null, '127.0.0.1', null, null, false, 404, 'NotFound', 0, new Date()];
const esc = (v) => v === null ? '\\N' : v instanceof Date ? v.toISOString().replace('T', ' ').replace('Z', '') : typeof v === 'boolean' ? (v ? 't' : 'f') : String(v).replace(/[\\\t\n\r]/g, (c) => ({ '\\': '\\\\', '\t': '\\t', '\n': '\\n', '\r': '\\r' })[c]);
const unnest = (N) => async (pg) => { const rows = Array.from({ length: N }, row); const colArr = (i) => rows.map((r) => r[i]);
  await pg.query(`insert into rql_request_logs (${cols}) select * from unnest($1::varchar[],$2::varchar[],$3::varchar[],$4::int4[],$5::varchar[],$6::bool[],$7::int2[],$8::varchar[],$9::int4[],$10::timestamp[])`, [0,1,2,3,4,5,6,7,8,9].map(colArr)); return N; };
const copy = (N) => async (pg) => { const rows = Array.from({ length: N }, row); const text = rows.map((r) => r.map(esc).join('\t')).join('\n') + '\n';
  await pg.query(`copy rql_request_logs (${cols}) from '/dev/blob'`, [], { blob: new Blob([text]) }); return N; };
const dbs = { full: await mk(true, true), nopk: await mk(true, false), noidx: await mk(false, true), bare: await mk(false, false), brin: await mk(false, true, 'create index rql_t on rql_request_logs using brin (rql_create_time);'), brinc: await mk(false, true, 'create index rql_t on rql_request_logs using brin (rql_create_time); alter sequence rql_request_logs_rql_request_log_id_seq cache 1000;') };
const variants = [['unnest200 full', 'full', unnest(200)], ['unnest1000 full', 'full', unnest(1000)], ['copy200 full', 'full', copy(200)], ['copy1000 full', 'full', copy(1000)], ['copy1000 nopk', 'nopk', copy(1000)], ['copy1000 noidx', 'noidx', copy(1000)], ['copy1000 bare', 'bare', copy(1000)], ['copy1000 brin', 'brin', copy(1000)], ['copy1000 brin+cache', 'brinc', copy(1000)], ['unnest1000 brin+cache', 'brinc', unnest(1000)]];
const best = new Map();
for (let round = 0; round < 6; round++) for (const [label, db, fn] of variants) {
  const c0 = process.cpuUsage(); let rows = 0;
  for (let i = 0; i < 10; i++) rows += await fn(dbs[db]);
  const c = process.cpuUsage(c0); const us = (c.user + c.system) / rows;
  if (round > 0) best.set(label, Math.min(best.get(label) ?? 1e9, us));
}
for (const [l, us] of best) console.log(l.padEnd(18), us.toFixed(2), 'us/row');
