import { afterEach, describe, expect, it } from 'vitest';
import { Webhook } from 'standardwebhooks';
import { gate } from '../helpers/interleave.js';
import { pollUntil } from '../helpers/processes.js';
import { startReceiver, type Receiver } from '../helpers/webhook-receiver.js';
import { call, setSettings, sleep, startCluster, type Cluster, type Node } from './harness.js';

// kill -9 while webhook deliveries are due and while the endpoint is slow (issue 38, item 4): after the
// restart every event is delivered at least once with its own webhook-id, signed; on two nodes on
// PostgreSQL no delivery is ever in flight from both at once (the receiver counts open requests per id).

let c: Cluster | undefined;
let rx: Receiver | undefined;
afterEach(async () => {
  await rx?.close();
  await c?.close();
  c = undefined;
});

async function prepare(cluster: Cluster) {
  await setSettings(cluster, { api_require_https: false, webhook_allow_private_targets: true, api_rate_limit_requests: 1_000_000 });
  const headers = { public_key: cluster.admin.public_key, secret_key: cluster.admin.secret_key };
  const slow = gate();
  rx = await startReceiver();
  // The first answers hang until the kill: deliveries in flight when the server dies.
  rx.answer(...Array.from({ length: 40 }, () => ({ status: 200, wait: slow.opened })));
  const created = await call(cluster.nodes[0]!, 'POST', '/api/v1/action/webhook_endpoint_create', { headers, body: { url: rx.url } });
  expect(created.status, created.text).toBe(200);
  return { headers, slow, endpointId: created.json.data.endpoint_id as number, secret: created.json.data.secret as string };
}

async function writeEvents(node: Node, headers: Record<string, string>, endpointId: number, n: number): Promise<string[]> {
  const ids: string[] = [];
  for (let i = 0; i < n; i++) {
    const res = await call(node, 'POST', '/api/v1/action/webhook_endpoint_test', { headers, body: { endpoint_id: endpointId } });
    expect(res.status, res.text).toBe(200);
    ids.push(res.json.data.event_id);
  }
  return ids;
}

function expectAllDelivered(r: Receiver, ids: string[], secret: string) {
  for (const id of ids) expect(r.answered.has(id), `event ${id} delivered`).toBe(true);
  const wh = new Webhook(secret);
  for (const got of r.received) {
    expect(ids).toContain(got.headers['webhook-id']);
    expect((wh.verify(got.body, got.headers) as { id: string }).id).toBe(got.headers['webhook-id']);
  }
}

describe('webhook deliveries survive kill -9', () => {
  it('on the embedded database: events due and in flight at the kill are all delivered after the restart, same webhook-id', async () => {
    c = await startCluster(1, { embedded: true });
    const { headers, slow, endpointId, secret } = await prepare(c);
    const node = c.nodes[0]!;
    const ids = await writeEvents(node, headers, endpointId, 30);
    // Wait until the worker holds deliveries open on the slow receiver, with more still due behind them.
    await pollUntil(async () => (rx!.received.length >= 20 ? true : undefined), 20_000);
    node.process.child.kill('SIGKILL');
    await node.process.exited;
    slow.open();
    const restarted = await c.start(0);
    const done = await pollUntil(async () => (ids.every((id) => rx!.answered.has(id)) ? true : undefined), 90_000, 250);
    expect(done, `delivered ${rx!.answered.size} of ${ids.length}`).toBe(true);
    expectAllDelivered(rx!, ids, secret);
    console.log(`embedded: ${ids.length} events, ${rx!.received.length} requests received, ${rx!.answered.size} answered 2xx`);
    expect((await call(restarted, 'GET', '/api/v1/auth/session')).status).toBeLessThan(500);
  }, 300_000);

  it('on two nodes on PostgreSQL: the survivor and the restarted node deliver everything, never one delivery from both at once', async () => {
    c = await startCluster(2);
    const { headers, slow, endpointId, secret } = await prepare(c);
    const [A, B] = c.nodes as [Node, Node];
    const ids = [...(await writeEvents(A, headers, endpointId, 20)), ...(await writeEvents(B, headers, endpointId, 20))];
    await pollUntil(async () => (rx!.received.length >= 30 ? true : undefined), 20_000);
    A.process.child.kill('SIGKILL');
    await A.process.exited;
    // More events while A is down; B goes on delivering (and takes A's claims once their lease runs out).
    ids.push(...(await writeEvents(B, headers, endpointId, 10)));
    slow.open();
    await sleep(2000);
    await c.start(0);
    ids.push(...(await writeEvents(c.nodes[0]!, headers, endpointId, 10)));
    const done = await pollUntil(async () => (ids.every((id) => rx!.answered.has(id)) ? true : undefined), 90_000, 250);
    expect(done, `delivered ${rx!.answered.size} of ${ids.length}`).toBe(true);
    expectAllDelivered(rx!, ids, secret);
    expect(rx!.maxOpenPerId, 'one delivery in flight from two nodes at once').toBe(1);
    console.log(`two nodes: ${ids.length} events, ${rx!.received.length} requests received, ${rx!.answered.size} answered 2xx`);
  }, 300_000);
});
