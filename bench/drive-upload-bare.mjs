#!/usr/bin/env node
// Floors and ceilings for bench/drive-upload.mjs: plain node:http receiving the same 8 MiB chunks
// (PUT /<mode>/<file name>/<start>) with no framework, database, authentication or per-chunk bookkeeping.
//   /file/<name>/<start>  through SHA-256 into the file <name> in BENCH_BARE_DIR, by the server's own chunk
//                         writer (appendChunk from dist/drive/uploads/parts.js): what Gatehouse costs beyond
//                         this is its per-chunk work (authentication, the lease, recording the bytes)
//   /hash/-/<start>       through SHA-256, then dropped: the ceiling of any Node server that must hash every
//                         byte it receives over the loopback (no disk at all)
//   /null/-/<start>       dropped: the loopback and node:http alone
import { createHash } from 'node:crypto';
import http from 'node:http';
import path from 'node:path';
import { appendChunk } from '../dist/drive/uploads/parts.js';

const dir = process.env.BENCH_BARE_DIR;
if (!dir) throw new Error('BENCH_BARE_DIR is required');
let hash = createHash('sha256');

const server = http.createServer(async (req, res) => {
  const [, mode, name, at] = req.url.split('/');
  const start = Number(at);
  if (start === 0) hash = createHash('sha256');
  const length = Number(req.headers['content-length']);
  if (mode === 'file') {
    if (!/^[\w.-]+$/.test(name)) throw new Error('a plain file name is required');
    await appendChunk({ file: path.join(dir, name), start, length, body: req, hash, stallMs: 60_000 });
  } else {
    await new Promise((resolve, reject) => {
      req.on('data', mode === 'hash' ? (chunk) => hash.update(chunk) : () => {});
      req.once('end', resolve);
      req.once('error', reject);
    });
  }
  res.setHeader('content-type', 'application/json');
  res.end(JSON.stringify({ data: { received_bytes: start + length } }));
});
server.keepAliveTimeout = 60_000;
server.listen(0, '127.0.0.1', () => process.stdout.write(`${JSON.stringify({ port: server.address().port, pid: process.pid, headers: {} })}\n`));
process.once('SIGTERM', () => server.close(() => process.exit(0)));
