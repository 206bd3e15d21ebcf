import http from 'node:http';
import https from 'node:https';
import type { LookupFunction } from 'node:net';
import type { ResolvedAddress } from './targets.js';

/** How long one attempt may take, connection to last byte (DESIGN 15). */
export const DELIVERY_TIMEOUT_MS = 15_000;
/** The share of the answer kept in the attempt log. */
export const KEPT_ANSWER_BYTES = 1024;

export type PostOutcome =
  | { kind: 'answered'; status: number; body: string; retryAfter: string | undefined; durationMs: number }
  | { kind: 'failed'; error: string; durationMs: number };

export interface PostRequest {
  url: URL;
  /** The addresses checked for this attempt: the connection goes to the first, never to a fresh DNS answer. */
  addresses: ResolvedAddress[];
  headers: Record<string, string>;
  body: string;
  timeoutMs?: number;
}

/** Posts one delivery. Never throws: a refused connection, a reset or the timeout is a `failed` outcome. */
export function postWebhook(req: PostRequest, nowMs: () => number = () => performance.now()): Promise<PostOutcome> {
  const started = nowMs();
  const pinned = req.addresses[0]!;
  const lookup: LookupFunction = (_host, opts, callback) => {
    if ((opts as { all?: boolean }).all) (callback as unknown as (e: null, a: ResolvedAddress[]) => void)(null, [pinned]);
    else callback(null, pinned.address, pinned.family);
  };
  const client = req.url.protocol === 'https:' ? https : http;
  return new Promise<PostOutcome>((resolve) => {
    let settled = false;
    const finish = (o: PostOutcome) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      resolve(o);
    };
    const request = client.request(
      req.url,
      {
        method: 'POST',
        lookup,
        agent: false,
        headers: { 'content-type': 'application/json', 'user-agent': 'Gatehouse-Webhooks/1.0', 'content-length': Buffer.byteLength(req.body), ...req.headers },
      },
      (res) => {
        const chunks: Buffer[] = [];
        let kept = 0;
        res.on('data', (c: Buffer) => {
          if (kept < KEPT_ANSWER_BYTES) {
            chunks.push(c);
            kept += c.length;
          }
        });
        res.on('end', () => {
          const retryAfter = res.headers['retry-after'];
          finish({
            kind: 'answered',
            status: res.statusCode ?? 0,
            body: Buffer.concat(chunks).subarray(0, KEPT_ANSWER_BYTES).toString('utf8'),
            retryAfter: Array.isArray(retryAfter) ? retryAfter[0] : retryAfter,
            durationMs: Math.round(nowMs() - started),
          });
        });
        res.on('error', (e) => finish({ kind: 'failed', error: describe(e), durationMs: Math.round(nowMs() - started) }));
      },
    );
    const timer = setTimeout(() => {
      finish({ kind: 'failed', error: `timed out after ${(req.timeoutMs ?? DELIVERY_TIMEOUT_MS) / 1000} s`, durationMs: Math.round(nowMs() - started) });
      request.destroy();
    }, req.timeoutMs ?? DELIVERY_TIMEOUT_MS);
    request.on('error', (e) => finish({ kind: 'failed', error: describe(e), durationMs: Math.round(nowMs() - started) }));
    request.end(req.body);
  });
}

function describe(e: Error & { code?: string }): string {
  return (e.code ? `${e.code}: ${e.message}` : e.message).slice(0, 255);
}
