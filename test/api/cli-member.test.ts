import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openCliDatabase } from '../../src/boot/cli-database.js';
import { runCli } from '../../src/boot/cli.js';
import { loadConfig } from '../../src/config.js';
import { TestClock } from '../../src/lib/clock.js';
import { FeatureRegistry } from '../../src/tiers/feature-registry.js';
import { createTier } from '../../src/tiers/tiers.js';
import { CsvParser } from '../../src/lib/csv.js';
import { onPostgres } from '../helpers/database.js';
import { scratchPostgres, tempDataDir } from '../helpers/processes.js';

// `gatehouse member import FILE [--dry-run]` and `member export [--out FILE]` (DESIGN 16), run in this
// process through the CLI entry: export from one site, import into a fresh one, and the members, their
// tiers and their card processor customers are the same.

interface Site {
  env: NodeJS.ProcessEnv;
  remove(): Promise<void>;
}

const cleanups: Array<() => Promise<void>> = [];
const files = tempDataDir('gh-member-files-');

async function newSite(): Promise<Site> {
  const data = tempDataDir('gh-member-site-');
  let env: NodeJS.ProcessEnv = { DATA_DIR: data.dir, LOG_LEVEL: 'error' };
  let drop = async () => {};
  if (onPostgres) {
    const db = await scratchPostgres();
    env = { ...env, DATABASE_URL: db.url };
    drop = db.drop;
  }
  const site = { env, remove: async () => (await drop(), data.remove()) };
  cleanups.push(site.remove);
  expect((await cli(site, 'migrate')).code).toBe(0);
  const opened = await openCliDatabase(loadConfig(env), { stdout: () => {}, stderr: () => {}, env });
  try {
    const ctx = { db: opened.database.db, clock: new TestClock(), registry: FeatureRegistry.load(), createdBy: null };
    await createTier(ctx, { sbt_name: 'gold', sbt_display_name: 'Gold Tier', sbt_tier_level: 20 });
    await createTier(ctx, { sbt_name: 'silver', sbt_display_name: 'Silver Circle', sbt_tier_level: 10 });
  } finally {
    await opened.close();
  }
  return site;
}

async function cli(site: Site, ...args: string[]) {
  let stdout = '';
  let stderr = '';
  const code = await runCli(args, { stdout: (s) => (stdout += s), stderr: (s) => (stderr += s), env: site.env });
  let json: any;
  try {
    json = JSON.parse(stdout);
  } catch {
    json = undefined;
  }
  return { code, stdout, stderr, json };
}

function records(text: string): string[][] {
  const p = new CsvParser();
  return [...p.push(text), ...p.end()].map((r) => r.fields);
}

/** The exported rows without our user id (a fresh site numbers its users its own way), by email. */
const comparable = (file: string) =>
  records(readFileSync(file, 'utf8'))
    .slice(1)
    .map((r) => r.slice(1))
    .sort((a, b) => a[0]!.localeCompare(b[0]!));

const SOURCE = [
  'email,name,subscribed_to_emails,complimentary_plan,stripe_customer_id,created_at,tiers,labels',
  'ada@example.com,Ada Lovelace,true,true,,2023-05-06T07:08:09.000Z,Gold Tier,vip',
  'grace@example.com,Grace Brewster Hopper,false,false,cus_Grace1,2022-01-01T00:00:00.000Z,silver,',
  'linus@example.com,Linus,true,false,,,,',
  '"quoted@example.com","Name, With ""Comma""",false,false,,,,',
  'broken-address,Nobody,,,,,,',
].join('\n');

let a: Site;
let b: Site;
beforeAll(async () => {
  a = await newSite();
  b = await newSite();
  writeFileSync(path.join(files.dir, 'source.csv'), SOURCE);
});
afterAll(async () => {
  for (const c of cleanups) await c();
  files.remove();
});

describe(`operator CLI: member import and export (${onPostgres ? 'PostgreSQL' : 'PGlite data directory'})`, () => {
  it('import --dry-run reports what would happen and changes nothing', async () => {
    const r = await cli(a, 'member', 'import', path.join(files.dir, 'source.csv'), '--dry-run');
    expect(r.code, r.stderr).toBe(0);
    expect(r.json).toMatchObject({ dry_run: true, rows: 5, counts: { create: 4, update: 0, unchanged: 0, error: 1 }, unknown_columns: [], not_carried: ['labels'] });
    expect(r.json.errors).toEqual([{ line: 6, email: 'broken-address', outcome: 'error', reason: 'malformed_email', message: "'broken-address' is not an email address" }]);
    expect(r.stderr).toMatch(/member import \(dry run\) \[#+\] 100% 5 rows, 1 skipped/);
    const exported = await cli(a, 'member', 'export');
    expect(exported.code).toBe(0);
    expect(exported.stdout).toBe('id,email,name,note,subscribed_to_emails,complimentary_plan,stripe_customer_id,created_at,deleted_at,labels,tiers\r\n');
    expect(exported.stderr).toMatch(/exported 0 members/);
  });

  it('import applies the file (progress on stderr, summary on stdout); export writes Ghost columns', async () => {
    const r = await cli(a, 'member', 'import', path.join(files.dir, 'source.csv'));
    expect(r.code, r.stderr).toBe(0);
    expect(r.json).toMatchObject({ dry_run: false, rows: 5, counts: { create: 4, update: 0, unchanged: 0, error: 1 } });
    expect(r.stderr).toMatch(/member import \[#+\] 100%/);
    const out = path.join(files.dir, 'a.csv');
    const exported = await cli(a, 'member', 'export', '--out', out);
    expect(exported.code, exported.stderr).toBe(0);
    expect(exported.json).toEqual({ file: out, members: 4 });
    expect(comparable(out)).toEqual([
      ['ada@example.com', 'Ada Lovelace', '', 'true', 'true', '', '2023-05-06T07:08:09.000Z', '', '', 'Gold Tier'],
      ['grace@example.com', 'Grace Brewster Hopper', '', 'false', 'true', 'cus_Grace1', '2022-01-01T00:00:00.000Z', '', '', 'Silver Circle'],
      ['linus@example.com', 'Linus', '', 'true', 'false', '', expect.any(String), '', '', ''],
      ['quoted@example.com', 'Name, With "Comma"', '', 'false', 'false', '', expect.any(String), '', '', ''],
    ]);
  });

  it('export, then import into a fresh site, gives the same members, tiers and customer links; again changes nothing', async () => {
    const first = path.join(files.dir, 'a.csv');
    const r = await cli(b, 'member', 'import', first);
    expect(r.code, r.stderr).toBe(0);
    expect(r.json.counts).toEqual({ create: 4, update: 0, unchanged: 0, error: 0 });
    const second = path.join(files.dir, 'b.csv');
    expect((await cli(b, 'member', 'export', '--out', second)).code).toBe(0);
    expect(comparable(second)).toEqual(comparable(first));

    const again = await cli(b, 'member', 'import', first);
    expect(again.json.counts).toEqual({ create: 0, update: 0, unchanged: 4, error: 0 });
  });

  it('a file that is not CSV exits 2 with the reason and changes nothing', async () => {
    const bin = path.join(files.dir, 'image.png');
    writeFileSync(bin, Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x00, 0xff]));
    const r = await cli(b, 'member', 'import', bin);
    expect(r.code).toBe(2);
    expect(r.stdout).toBe('');
    expect(r.stderr).toMatch(/image\.png is not a member CSV: line 1: /);
    expect((await cli(b, 'member', 'import')).code).toBe(2);
  });
});
