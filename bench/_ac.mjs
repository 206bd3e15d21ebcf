import autocannon from 'autocannon';
const [url, dur, hdr] = process.argv.slice(2);
const r = await autocannon({ url, connections: 50, duration: Number(dur ?? 5), headers: hdr ? JSON.parse(hdr) : undefined });
console.log(JSON.stringify({ rps: r.requests.average, p50: r.latency.p50, p99: r.latency.p99, codes: Object.keys(r.statusCodeStats ?? {}), errors: r.errors }));
