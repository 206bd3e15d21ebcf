#!/usr/bin/env node
// The peer of bench/drive-upload.mjs: the reference resumable-upload server for Node, tus (`@tus/server`
// with `@tus/file-store`, the tus project's own), on plain node:http, storing uploads in BENCH_BARE_DIR/tus
// on the same disk. The client sends it the same 8 MiB chunks on one kept-alive connection (POST to create
// the upload, then one PATCH per chunk at its Upload-Offset). It neither hashes nor fsyncs what it stores.
// Prints one JSON line ({"port", "pid", "headers"}) once it listens, then serves until SIGTERM.
import http from 'node:http';
import path from 'node:path';
import { FileStore } from '@tus/file-store';
import { Server } from '@tus/server';

const dir = process.env.BENCH_BARE_DIR;
if (!dir) throw new Error('BENCH_BARE_DIR is required');
const tus = new Server({ path: '/files', relativeLocation: true, datastore: new FileStore({ directory: path.join(dir, 'tus') }) });
const server = http.createServer((req, res) => void tus.handle(req, res));
server.keepAliveTimeout = 60_000;
server.listen(0, '127.0.0.1', () => process.stdout.write(`${JSON.stringify({ port: server.address().port, pid: process.pid, headers: {} })}\n`));
process.once('SIGTERM', () => server.close(() => process.exit(0)));
