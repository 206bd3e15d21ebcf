#!/usr/bin/env node
// The floor for bench/drive-upload.mjs: plain node:http receiving the same chunks (PUT /<start>) into one
// file through SHA-256, with no framework, database, authentication or checks. What the real upload path
// costs beyond this is Gatehouse's; what this costs beyond cp is Node's and the loopback's.
import { createHash } from 'node:crypto';
import { createWriteStream } from 'node:fs';
import { open } from 'node:fs/promises';
import http from 'node:http';
import { Transform } from 'node:stream';
import { pipeline } from 'node:stream/promises';

const file = process.env.BENCH_BARE_FILE;
if (!file) throw new Error('BENCH_BARE_FILE is required');
await (await open(file, 'w')).close();
const hash = createHash('sha256');
const server = http.createServer(async (req, res) => {
  const start = Number(req.url.slice(1));
  const through = new Transform({ transform(chunk, _enc, done) { hash.update(chunk); done(null, chunk); } });
  await pipeline(req, through, createWriteStream(file, { flags: 'r+', start }));
  res.setHeader('content-type', 'application/json');
  res.end(JSON.stringify({ data: { received_bytes: start } }));
});
server.listen(0, '127.0.0.1', () => process.stdout.write(`${JSON.stringify({ port: server.address().port, pid: process.pid, headers: {} })}\n`));
process.once('SIGTERM', () => server.close(() => process.exit(0)));
