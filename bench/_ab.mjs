import { createRequire } from 'node:module'; const require_ = createRequire(import.meta.url);
// A/B: start several targets, rotate short autocannon runs across them, report median rps.
// usage: node bench/_ab.mjs ROUNDS DUR 'label|mode|ENV=1,ENV2=x|path|headerKind' ...
import { spawn } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import os from 'node:os';
import { createInterface } from 'node:readline';
import autocannon from 'autocannon';
import { readFileSync } from 'node:fs';
const cpu = (p) => cpu1(p);
const cpu1 = (pid) => { const f = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' '); return (Number(f[11]) + Number(f[12])) * 10; };
const [rounds, dur, ...specs] = process.argv.slice(2);
const start = (mode, extra) => new Promise((res, rej) => {
  const c = spawn('taskset', ['-c', '1', process.execPath, ...(mode === 'spin' ? ['bench/_spin.mjs'] : ['bench/server.mjs', mode])], { env: { ...process.env, BENCH_DATA_DIR: mkdtempSync(os.tmpdir() + '/ab-'), ...extra }, stdio: ['ignore', 'pipe', 'inherit'] });
  c.once('exit', (code) => rej(new Error('exit ' + code)));
  createInterface({ input: c.stdout }).once('line', (l) => res({ ...JSON.parse(l), child: c }));
});
const targets = [];
for (const s of specs) {
  const [label, mode, envs, path, kind] = s.split('|');
  const extra = Object.fromEntries((envs || '').split(',').filter(Boolean).map((kv) => kv.split('=')));
  const srv = await start(mode, extra);
  let headers;
  if (kind === 'machine') headers = { public_key: srv.public_key, secret_key: srv.secret_key };
  if (kind === 'session') {
    const r = await fetch(`http://127.0.0.1:${srv.port}/api/v1/auth/login`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ email: srv.email, password: srv.password, device_label: 'b' }) });
    const b = await r.json(); headers = { public_key: b.data.public_key, secret_key: b.data.secret_key };
  }
  targets.push({ label, srv, url: `http://127.0.0.1:${srv.port}${path}`, headers, rps: [], us: [], codes: new Set() });
}
for (const t of targets) await autocannon({ url: t.url, headers: t.headers, connections: 50, duration: 1 });
for (let r = 0; r < Number(rounds); r++) for (const t of targets) {
  const c0 = cpu(t.srv.child.pid);
  const res = await autocannon({ url: t.url, headers: t.headers, connections: 50, duration: Number(dur) });
  t.us.push((cpu(t.srv.child.pid) - c0) * 1000 / res.requests.total);
  t.rps.push(res.requests.average); for (const c of Object.keys(res.statusCodeStats ?? {})) t.codes.add(c);
}
const med = (a) => [...a].sort((x, y) => x - y)[Math.floor(a.length / 2)];
const base = med(targets[0].rps);
for (const t of targets) console.log(t.label.padEnd(24), String(Math.round(med(t.rps))).padStart(7), (med(t.rps) / base).toFixed(2), [...t.codes].join(), 'cpu us/req', med(t.us).toFixed(1), t.rps.map(Math.round).join(' '));
for (const t of targets) t.srv.child.kill('SIGTERM');
process.exit(0);
