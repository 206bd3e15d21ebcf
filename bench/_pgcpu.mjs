// Per-request CPU split (server process, all postgres processes, all redis) for targets; PostgreSQL.
import { spawn, execSync } from 'node:child_process';
import { readFileSync, mkdtempSync } from 'node:fs';
import { createInterface } from 'node:readline';
import autocannon from 'autocannon';
const [rounds, dur, ...specs] = process.argv.slice(2);
const ticks = (pid) => { try { const f = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' '); return (Number(f[11]) + Number(f[12])) * 10; } catch { return 0; } };
const pgTicks = () => execSync('pgrep -u postgres || true').toString().split('\n').filter(Boolean).reduce((a, p) => a + ticks(p), 0);
const start = (mode, extra) => new Promise((res, rej) => {
  const c = spawn(process.execPath, ['bench/server.mjs', mode], { env: { ...process.env, BENCH_DATA_DIR: mkdtempSync('/tmp/ab-'), ...extra }, stdio: ['ignore', 'pipe', 'inherit'] });
  c.once('exit', (code) => rej(new Error('exit ' + code)));
  createInterface({ input: c.stdout }).once('line', (l) => res({ ...JSON.parse(l), child: c }));
});
const targets = [];
let dbn = 0;
for (const s of specs) {
  const [label, mode, envs, path, kind] = s.split('|');
  const extra = Object.fromEntries((envs || '').split(',').filter(Boolean).map((kv) => kv.split('=')));
  const name = `ghx_${process.pid}_${dbn++}`; execSync(`psql -q -h 127.0.0.1 -U postgres -c 'create database ${name}'`); extra.DATABASE_URL = `postgres://postgres@127.0.0.1:5432/${name}`;
  const srv = await start(mode, extra);
  let headers;
  if (kind === 'machine') headers = { public_key: srv.public_key, secret_key: srv.secret_key };
  if (kind === 'session') {
    const r = await fetch(`http://127.0.0.1:${srv.port}/api/v1/auth/login`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ email: srv.email, password: srv.password, device_label: 'b' }) });
    const b = await r.json(); headers = { public_key: b.data.public_key, secret_key: b.data.secret_key };
  }
  targets.push({ label, srv, url: `http://127.0.0.1:${srv.port}${path}`, headers, rps: [], node: [], pg: [], codes: new Set() });
}
for (const t of targets) await autocannon({ url: t.url, headers: t.headers, connections: 50, duration: 1 });
for (let r = 0; r < Number(rounds); r++) for (const t of targets) {
  const n0 = ticks(t.srv.child.pid), p0 = pgTicks();
  const res = await autocannon({ url: t.url, headers: t.headers, connections: 50, duration: Number(dur) });
  const n = res.requests.total;
  t.node.push((ticks(t.srv.child.pid) - n0) * 1000 / n); t.pg.push((pgTicks() - p0) * 1000 / n);
  t.rps.push(res.requests.average); for (const c of Object.keys(res.statusCodeStats ?? {})) t.codes.add(c);
}
const med = (a) => [...a].sort((x, y) => x - y)[Math.floor(a.length / 2)];
const base = med(targets[0].rps);
for (const t of targets) console.log(t.label.padEnd(16), String(Math.round(med(t.rps))).padStart(7), (med(t.rps) / base).toFixed(2), [...t.codes].join(), 'node us/req', med(t.node).toFixed(1), 'pg us/req', med(t.pg).toFixed(1));
for (const t of targets) t.srv.child.kill('SIGTERM');
await new Promise((r) => setTimeout(r, 1500));
for (let i = 0; i < dbn; i++) execSync(`psql -q -h 127.0.0.1 -U postgres -c 'drop database ghx_${process.pid}_${i} with (force)'`);
process.exit(0);
