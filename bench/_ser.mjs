import { serializeApiPayload } from '../dist/http/envelope.js';
const row = (i) => ({ pst_post_id: i, pst_usr_user_id: 1, pst_title: 'Post ' + i, pst_body: 'Lorem ipsum dolor sit amet. '.repeat(40), pst_is_published: true, pst_published_time: new Date(), pst_create_time: new Date(), pst_update_time: new Date(), pst_delete_time: null, pst_link: 'post-' + i, pst_sbt_subscription_tier_id: null, pst_preview: null, tier_access: { allowed: true, reason: 'ungated' } });
const payload = () => ({ api_version: '1.0', success_message: '', data: Array.from({ length: 20 }, (_, i) => row(i)), num_results: 30, page: 1, numperpage: 20 });
function fmt(d) { return d.toISOString().slice(0, 19).replace('T', ' '); }
function prep(v) {
  if (v === null || typeof v !== 'object') return typeof v === 'bigint' ? Number(v) : v;
  if (v instanceof Date) return Number.isNaN(v.getTime()) ? null : fmt(v);
  if (Array.isArray(v)) { let out = v; for (let i = 0; i < v.length; i++) { const x = v[i]; const y = prep(x); if (y !== x) { if (out === v) out = v.slice(); out[i] = y; } } return out; }
  if (typeof v.toJSON === 'function') return v;
  let out = v; for (const k in v) { const x = v[k]; const y = prep(x); if (y !== x) { if (out === v) out = { ...v }; out[k] = y; } } return out;
}
const plain = (p) => JSON.stringify(prep(p));
const ps = Array.from({ length: 200 }, payload);
const a = serializeApiPayload(ps[0]), b = plain(ps[0]);
console.log('same', a === b, a.length);
for (const [l, f] of [['replacer', serializeApiPayload], ['prewalk', plain], ['replacer', serializeApiPayload], ['prewalk', plain]]) {
  const t = performance.now(); for (let r = 0; r < 20; r++) for (const p of ps) f(p); console.log(l, ((performance.now() - t) * 1000 / 4000).toFixed(1), 'us/payload');
}
