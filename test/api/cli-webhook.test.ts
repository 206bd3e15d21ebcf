import { describe, expect, it } from 'vitest';
import { onPostgres } from '../helpers/database.js';
import { useCliSite } from '../helpers/cli-site.js';

// `gatehouse webhook list|create|redeliver` (DESIGN 15), the way test/api/cli.test.ts runs commands.
describe(`gatehouse webhook (${onPostgres ? 'PostgreSQL' : 'PGlite through the server socket'})`, { timeout: 60_000 }, () => {
  const { cli } = useCliSite('gh-cli-webhook-');

  it('refuses a private target with exit 2, creates one once allowed, lists it without its secret', async () => {
    const refused = await cli('webhook', 'create', '--url', 'https://127.0.0.1/hook');
    expect(refused.code, refused.stderr).toBe(2);
    expect(refused.stderr).toMatch(/--url host 127\.0\.0\.1 resolves to a private, loopback or link-local address/);
    expect((await cli('setting', 'set', 'webhook_allow_private_targets', 'true')).code).toBe(0);
    const created = await cli('webhook', 'create', '--url', 'http://127.0.0.1:9/hook', '--description', 'local', '--event-type', 'tier.granted', '--event-type', 'order.paid');
    expect(created.code, created.stderr).toBe(0);
    expect(created.json).toMatchObject({ url: 'http://127.0.0.1:9/hook', description: 'local', event_types: ['tier.granted', 'order.paid'], enabled: true });
    expect(created.json.secret).toMatch(/^whsec_/);
    const list = await cli('webhook', 'list');
    expect(list.code, list.stderr).toBe(0);
    expect(list.json.endpoints).toHaveLength(1);
    expect(list.stdout).not.toContain('whsec_');
    const badType = await cli('webhook', 'create', '--url', 'http://127.0.0.1:9/x', '--event-type', 'nope');
    expect(badType.code).toBe(2);
    expect(badType.stderr).toMatch(/--event-types not in the catalogue: nope/);
  });

  it('redelivers every failure of an endpoint since a time, and refuses an unknown event with exit 2', async () => {
    const since = await cli('webhook', 'redeliver', '--endpoint-id', '1', '--since', '2020-01-01 00:00:00');
    expect(since.code, since.stderr).toBe(0);
    expect(since.json).toEqual({ redelivered: 0 });
    const unknown = await cli('webhook', 'redeliver', '--event-id', 'evt_nope');
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toMatch(/No event evt_nope/);
    const usage = await cli('webhook', 'redeliver', '--endpoint-id', '1');
    expect(usage.code).toBe(2);
    expect(usage.stderr).toMatch(/give --event-id, or --endpoint-id with --since/);
  });
});
