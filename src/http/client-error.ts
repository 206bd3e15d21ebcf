import { STATUS_CODES } from 'node:http';
import type { Duplex } from 'node:stream';
import { failure } from './envelope.js';
import { ApiError } from './errors.js';
import { SECURITY_HEADERS } from './transport.js';

/** What Node's HTTP server hands the client-error handler: the parser's error and, for a parse error, the bytes it choked on. */
export interface ClientError extends Error {
  code?: string;
  rawPacket?: Buffer;
}

/** The refusal for a request Node's HTTP parser (or its request timeout) gave up on. */
export function clientErrorRefusal(err: ClientError): ApiError {
  if (err.code === 'HPE_HEADER_OVERFLOW') return new ApiError(431, 'TransactionError', 'Request URL or headers are too large');
  if (err.code === 'ERR_HTTP_REQUEST_TIMEOUT') return new ApiError(408, 'TransactionError', 'Request timed out');
  return new ApiError(400, 'TransactionError', 'Malformed request');
}

/**
 * The request target as far as the parser saw it: the path of the request line at the start of the
 * bytes it choked on (an absolute-form target reduced to its path), or undefined when those bytes do not
 * start with a request line (the line came in an earlier chunk, or is itself what is malformed).
 */
export function requestTargetPath(rawPacket: Buffer | undefined): string | undefined {
  if (!rawPacket || rawPacket.length === 0) return undefined;
  // The method and the start of the target are enough; never read more than a line's worth.
  const head = rawPacket.subarray(0, 2048).toString('latin1');
  const match = /^[A-Za-z]{1,20} (\S+)/.exec(head);
  if (!match) return undefined;
  const target = match[1]!;
  if (target.startsWith('/')) return target;
  const absolute = /^https?:\/\/[^/?#]*(\/[^?#]*)?/i.exec(target);
  return absolute ? (absolute[1] ?? '/') : undefined;
}

const isUnder = (path: string, prefix: string) => path === prefix || path.startsWith(`${prefix}/`) || path.startsWith(`${prefix}?`);

/**
 * Fastify's clientErrorHandler: a request refused by Node's HTTP parser before Fastify sees it (a URL or
 * headers over the size limit, a malformed request line) is answered like every other refusal. Under the
 * API prefix, and whenever the target cannot be read (the bytes that failed do not start with a request
 * line), that is the error envelope with the security headers; a website path gets a short plain-text
 * answer. The connection is closed after it, as Node does: the parser's state is lost.
 */
export function clientErrorHandler(apiPrefix: string) {
  return function handleClientError(err: ClientError, socket: Duplex): void {
    // A reset connection is gone: nothing to answer.
    if (err.code === 'ECONNRESET' || socket.destroyed) return;
    const refusal = clientErrorRefusal(err);
    const path = requestTargetPath(err.rawPacket);
    const api = path === undefined || isUnder(path, apiPrefix);
    const body = api ? JSON.stringify(failure(refusal)) : `${refusal.message}\n`;
    const headers: Record<string, string> = {
      ...SECURITY_HEADERS,
      'content-type': api ? 'application/json; charset=utf-8' : 'text/plain; charset=utf-8',
      'content-length': String(Buffer.byteLength(body)),
      connection: 'close',
    };
    if (socket.writable) {
      const head = Object.entries(headers).map(([name, value]) => `${name}: ${value}\r\n`).join('');
      socket.write(`HTTP/1.1 ${refusal.status} ${STATUS_CODES[refusal.status]}\r\n${head}\r\n${body}`);
    }
    socket.destroy(err);
  };
}
