import { beforeAll, describe, expect, it } from 'vitest';
import { onPostgres } from '../helpers/database.js';
import { useCliSite } from '../helpers/cli-site.js';

// `gatehouse setting list`: every setting, the installed plugins' too, with its value (a secret only as
// set or not set), type, where it comes from and what it does. Needs `npx tsc -p tsconfig.json` first.
describe(`gatehouse setting list (${onPostgres ? 'PostgreSQL' : 'PGlite through the server socket'})`, { timeout: 90_000 }, () => {
  const { cli } = useCliSite('gh-cli-settings-');

  beforeAll(async () => {
    if (onPostgres) expect((await cli('migrate')).code).toBe(0);
  });

  it('prints every setting as one JSON object, and in aligned columns with --table, plugins’ included, secrets only as set or not set', async () => {
    const secret = 'sk_test_list_never_printed';
    expect((await cli('setting', 'set', 'card_processor_api_key', secret)).code).toBe(0);
    expect((await cli('setting', 'set', 'site_name', 'Lighthouse Club')).code).toBe(0);

    const r = await cli('setting', 'list', '--table');
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout + r.stderr).not.toContain(secret);
    const lines = r.stdout.trimEnd().split('\n');
    const header = lines[0]!;
    expect(header).toMatch(/^NAME +TYPE +VALUE +SOURCE +DESCRIPTION$/);
    // Aligned: every column starts where its heading does.
    const starts = ['TYPE', 'VALUE', 'SOURCE', 'DESCRIPTION'].map((h) => header.indexOf(h));
    const row = (name: string) => lines.find((l) => l.startsWith(`${name} `))!;
    const cells = (name: string) => {
      const l = row(name);
      return [l.slice(0, starts[0]), l.slice(starts[0], starts[1]), l.slice(starts[1], starts[2]), l.slice(starts[2], starts[3]), l.slice(starts[3])].map((c) => c.trim());
    };
    expect(cells('card_processor_api_key')).toEqual(['card_processor_api_key', 'string', 'set', 'core', 'Card processor API key']);
    expect(cells('card_processor_webhook_secret')).toEqual(['card_processor_webhook_secret', 'string', 'not set', 'core', 'Card processor webhook signing secret']);
    expect(cells('site_name')).toEqual(['site_name', 'string', 'Lighthouse Club', 'core', 'Site name: in page titles, the header, mail subjects and as the name mail is sent under']);
    expect(cells('drive_active')).toEqual(['drive_active', 'boolean', 'false', 'core', 'Member Drive']);
    expect(cells('api_rate_limit_window')).toEqual(['api_rate_limit_window', 'integer', '3600', 'core', 'General window, seconds']);
    // An installed plugin's settings, whether or not it is active.
    expect(cells('mailbox_domain').slice(0, 4)).toEqual(['mailbox_domain', 'string', 'localhost', 'mailbox']);
    expect(cells('assistant_api_key').slice(2, 4)).toEqual(['not set', 'assistant']);

    const json = await cli('setting', 'list');
    expect(json.code, json.stderr).toBe(0);
    expect(json.stdout).not.toContain(secret);
    const entries = json.json.settings as Array<Record<string, unknown>>;
    expect(entries.find((e) => e.name === 'card_processor_api_key')).toEqual({ name: 'card_processor_api_key', type: 'string', value: 'set', secret: true, source: 'core', description: 'Card processor API key' });
    expect(entries.find((e) => e.name === 'api_min_client_versions')).toEqual({ name: 'api_min_client_versions', type: 'json', value: {}, secret: false, source: 'core', description: 'Map of client_app to minimum semver' });
    expect(entries.find((e) => e.name === 'mailbox_domain')).toMatchObject({ value: 'localhost', source: 'mailbox' });
    // One line per setting in the table, and the same settings in both.
    expect(lines.length - 1).toBe(entries.length);
    expect(new Set(entries.map((e) => e.name)).size).toBe(entries.length);
  });

  it('refuses arguments it does not take (exit 2), and the group usage names list', async () => {
    const r = await cli('setting', 'list', 'extra');
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('usage: gatehouse setting list [--table]');
    const usage = await cli('setting');
    expect(usage.code).toBe(2);
    expect(usage.stderr).toContain('gatehouse setting list [--table]');
  });
});
