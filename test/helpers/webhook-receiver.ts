import http from 'node:http';
import type { AddressInfo } from 'node:net';

export interface Received {
  headers: Record<string, string>;
  body: string;
}

export interface ReceiverAnswer {
  status: number;
  headers?: Record<string, string>;
  body?: string;
  /** Hold the answer until this resolves (a slow receiver). */
  wait?: Promise<void>;
}

/**
 * A webhook receiver on 127.0.0.1: keeps every request, answers from a queue (then `fallback`), and counts
 * how many requests for one webhook-id are open at once.
 */
export async function startReceiver(fallback: ReceiverAnswer = { status: 200 }) {
  const received: Received[] = [];
  /** webhook-ids answered with a 2xx. */
  const answered = new Set<string>();
  const answers: ReceiverAnswer[] = [];
  const open = new Map<string, number>();
  let maxOpenPerId = 0;
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', async () => {
      const headers = Object.fromEntries(Object.entries(req.headers).map(([k, v]) => [k, String(v)]));
      const id = headers['webhook-id'] ?? '';
      open.set(id, (open.get(id) ?? 0) + 1);
      maxOpenPerId = Math.max(maxOpenPerId, open.get(id)!);
      received.push({ headers, body: Buffer.concat(chunks).toString('utf8') });
      // Open until answered or until the sender hangs up (a killed server's connection closes).
      let closed = false;
      const close = () => {
        if (!closed) open.set(id, open.get(id)! - 1);
        closed = true;
      };
      res.on('close', close);
      const answer = answers.shift() ?? fallback;
      if (answer.wait) await answer.wait;
      if (closed) return;
      close();
      res.writeHead(answer.status, answer.headers ?? {});
      res.end(answer.body ?? 'ok');
      if (answer.status >= 200 && answer.status < 300) answered.add(id);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  return {
    url: `http://127.0.0.1:${port}/hook`,
    port,
    received,
    answered,
    /** Answers for the next requests, in order. */
    answer(...a: ReceiverAnswer[]) {
      answers.push(...a);
    },
    get maxOpenPerId() {
      return maxOpenPerId;
    },
    async close() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
export type Receiver = Awaited<ReturnType<typeof startReceiver>>;
