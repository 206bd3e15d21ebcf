import { readFileSync } from 'node:fs';
import { mkdtempSync, rmSync, truncateSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli } from '../../src/boot/cli.js';
import { exportGhostContent } from '../../src/store/ghost/export.js';
import { GhostExportError, parseGhostExport } from '../../src/store/ghost/format.js';
import { importGhostContent, type GhostImportReport } from '../../src/store/ghost/import.js';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { signIn, type WebClient } from '../helpers/browser-session.js';
import { onPostgres } from '../helpers/database.js';
import { scratchPostgres, tempDataDir } from '../helpers/processes.js';

// DESIGN 16: a Ghost 6 export (test/fixtures/ghost/ghost-6-export.json) imports its tiers, posts and pages
// with every gate right for a tierless reader, a free member and each tier's member; a second import
// changes nothing; tier sets that are not "every tier from some level up" are widened and reported; a
// file that is not a Ghost export is refused; export then import into a fresh database round-trips.

const FIXTURE = path.resolve('test/fixtures/ghost/ghost-6-export.json');
const fixtureText = readFileSync(FIXTURE, 'utf8');

async function runImport(t: TestApp, text: string = fixtureText, fallbackAuthorId?: number): Promise<GhostImportReport> {
  const { meta, data } = parseGhostExport(text);
  return importGhostContent({ db: t.services.db, clock: t.clock, registry: t.services.tiers.registry, fallbackAuthorId: fallbackAuthorId ?? null }, meta, data);
}

async function localIds(t: TestApp, kind: 'post' | 'page' | 'tier'): Promise<Map<string, number>> {
  const rows = await (t.services.db as any).selectFrom('gim_ghost_imports').select(['gim_ghost_id', 'gim_local_id']).where('gim_kind', '=', kind).execute();
  return new Map(rows.map((r: { gim_ghost_id: string; gim_local_id: number | string }) => [r.gim_ghost_id, Number(r.gim_local_id)]));
}

const ghostId = (slug: string) => {
  const { data } = parseGhostExport(fixtureText);
  return data.posts.find((p) => p.slug === slug)!.id;
};

function multipart(fields: Record<string, string>, file: { name: string; filename: string; body: string }) {
  const boundary = '----gatehouseghost7d93';
  const parts = Object.entries(fields).map(([k, v]) => `--${boundary}\r\nContent-Disposition: form-data; name="${k}"\r\n\r\n${v}\r\n`);
  parts.push(`--${boundary}\r\nContent-Disposition: form-data; name="${file.name}"; filename="${file.filename}"\r\nContent-Type: application/json\r\n\r\n${file.body}\r\n`);
  return { payload: `${parts.join('')}--${boundary}--\r\n`, contentType: `multipart/form-data; boundary=${boundary}` };
}

describe('Ghost content import', () => {
  let t: TestApp;
  let first: GhostImportReport;
  let ownerId: number;
  const readers: Record<string, Record<string, string>> = {};

  beforeAll(async () => {
    t = await createTestApp();
    ownerId = (await t.createUser({ email: 'owner@ledger.example.com', permission: 10 })).userId;
    first = await runImport(t);
    const tiers = await localIds(t, 'tier');
    readers.tierless = (await t.keyHeaders()).headers;
    for (const [name, product] of [['free', '65f1a0c2d4e5f6a7b8c90001'], ['bronze', '65f1a0c2d4e5f6a7b8c90002'], ['silver', '65f1a0c2d4e5f6a7b8c90003'], ['gold', '65f1a0c2d4e5f6a7b8c90004']] as const) {
      const k = await t.keyHeaders();
      await t.services.tiers.membership.assignManually(k.userId, tiers.get(product)!, null);
      readers[name] = k.headers;
    }
  });
  afterAll(async () => t?.close());

  it('makes the tiers from the slugs, 10 levels apart in order of monthly price, and the free tier at level 1 for members-only content', async () => {
    const tiers = await t.services.db.selectFrom('sbt_subscription_tiers').select(['sbt_name', 'sbt_display_name', 'sbt_tier_level', 'sbt_is_active']).orderBy('sbt_tier_level').execute();
    expect(tiers).toEqual([
      { sbt_name: 'free', sbt_display_name: 'Free', sbt_tier_level: 1, sbt_is_active: true },
      { sbt_name: 'bronze', sbt_display_name: 'Bronze', sbt_tier_level: 10, sbt_is_active: true },
      { sbt_name: 'silver', sbt_display_name: 'Silver', sbt_tier_level: 20, sbt_is_active: true },
      { sbt_name: 'gold', sbt_display_name: 'Gold', sbt_tier_level: 30, sbt_is_active: true },
    ]);
    expect(first.counts).toEqual({
      tier: { created: 4, updated: 0, unchanged: 0, skipped: 0 },
      post: { created: 7, updated: 0, unchanged: 0, skipped: 0 },
      page: { created: 2, updated: 0, unchanged: 0, skipped: 0 },
    });
    expect(first.not_imported).toEqual([]);
    expect(first.ghost_version).toBe('6.3.0');
  });

  it('keeps title, slug, plain text body, excerpt, publish time and status, credited to the author with the same email', async () => {
    const posts = await localIds(t, 'post');
    const row = await (t.services.db as any).selectFrom('pst_posts').selectAll().where('pst_post_id', '=', posts.get(ghostId('welcome'))).executeTakeFirst();
    expect(row).toMatchObject({
      pst_title: 'Welcome to the Ledger',
      pst_link: 'welcome',
      pst_body: 'Welcome to the Ledger: opening words.\n\nThe rest of welcome for its readers.',
      pst_short_description: 'Who we are and what we write about.',
      pst_is_published: true,
      pst_tier_min_level: null,
      pst_usr_user_id: ownerId,
    });
    expect(new Date(row.pst_published_time).toISOString()).toBe('2026-02-01T10:00:00.000Z');
    const draft = await (t.services.db as any).selectFrom('pst_posts').selectAll().where('pst_post_id', '=', posts.get(ghostId('unfinished-draft'))).executeTakeFirst();
    expect([draft.pst_is_published, draft.pst_published_time]).toEqual([false, null]);
    const scheduled = await (t.services.db as any).selectFrom('pst_posts').selectAll().where('pst_post_id', '=', posts.get(ghostId('coming-next-month'))).executeTakeFirst();
    expect([scheduled.pst_is_published, new Date(scheduled.pst_published_time).toISOString(), scheduled.pst_tier_min_level]).toEqual([true, '2030-01-01T09:00:00.000Z', 10]);
    const pages = await localIds(t, 'page');
    const about = await (t.services.db as any).selectFrom('pag_pages').selectAll().where('pag_page_id', '=', pages.get(ghostId('about'))).executeTakeFirst();
    expect(about).toMatchObject({ pag_title: 'About', pag_link: 'about', pag_tier_min_level: null, pag_usr_user_id: ownerId });
    expect(about.pag_component_layout.html).toBe('<p>About: opening words.</p><p>The rest of about for its readers.</p>');
  });

  // Which readers may read each post's body (the gate is one minimum level: free 1, bronze 10, silver 20, gold 30).
  const expected: Record<string, { kind: 'Post' | 'Page'; level: number | null; readers: string[] }> = {
    welcome: { kind: 'Post', level: null, readers: ['tierless', 'free', 'bronze', 'silver', 'gold'] },
    'members-notes': { kind: 'Post', level: 1, readers: ['free', 'bronze', 'silver', 'gold'] },
    'paid-deep-dive': { kind: 'Post', level: 10, readers: ['bronze', 'silver', 'gold'] },
    'silver-and-up': { kind: 'Post', level: 20, readers: ['silver', 'gold'] },
    'bronze-and-gold': { kind: 'Post', level: 10, readers: ['bronze', 'silver', 'gold'] },
    about: { kind: 'Page', level: null, readers: ['tierless', 'free', 'bronze', 'silver', 'gold'] },
    'members-handbook': { kind: 'Page', level: 1, readers: ['free', 'bronze', 'silver', 'gold'] },
  };
  for (const [slug, want] of Object.entries(expected)) {
    it(`${slug}: readable by ${want.readers.join(', ')} through GET /api/v1/${want.kind}/{id}`, async () => {
      const id = (await localIds(t, want.kind === 'Post' ? 'post' : 'page')).get(ghostId(slug))!;
      for (const reader of ['tierless', 'free', 'bronze', 'silver', 'gold']) {
        const res = await t.request({ method: 'GET', url: `/api/v1/${want.kind}/${id}`, headers: readers[reader] });
        expect(res.statusCode, `${slug} for ${reader}: ${res.body}`).toBe(200);
        expect(res.json.data.tier_access.allowed, `${slug} for ${reader}`).toBe(want.readers.includes(reader));
        expect(res.json.data.tier_access.required_level, `${slug} for ${reader}`).toBe(want.level);
      }
    });
  }

  it('reports the tier set that is not every tier from its lowest level up, and the level it was widened to', async () => {
    expect(first.widened).toEqual([{ kind: 'post', ghost_id: ghostId('bronze-and-gold'), slug: 'bronze-and-gold', tiers: ['bronze', 'gold'], also_readable_by: ['silver'], level: 10 }]);
  });

  it('a second import of the same export changes nothing', async () => {
    const before = await t.services.db.selectFrom('sbt_subscription_tiers').selectAll().orderBy('sbt_subscription_tier_id').execute();
    const again = await runImport(t);
    expect(again.counts).toEqual({
      tier: { created: 0, updated: 0, unchanged: 4, skipped: 0 },
      post: { created: 0, updated: 0, unchanged: 7, skipped: 0 },
      page: { created: 0, updated: 0, unchanged: 2, skipped: 0 },
    });
    expect(await t.services.db.selectFrom('sbt_subscription_tiers').selectAll().orderBy('sbt_subscription_tier_id').execute()).toEqual(before);
    const count = await (t.services.db as any).selectFrom('pst_posts').select((eb: any) => eb.fn.countAll().as('n')).executeTakeFirst();
    expect(Number(count.n)).toBe(7);
  });

  it('a changed Ghost post updates its row and nothing else', async () => {
    const text = fixtureText.replace('"title": "Notes for members"', '"title": "Notes for members, revised"');
    const changed = await runImport(t, text);
    expect(changed.counts.post).toEqual({ created: 0, updated: 1, unchanged: 6, skipped: 0 });
    const back = await runImport(t);
    expect(back.counts.post).toEqual({ created: 0, updated: 1, unchanged: 6, skipped: 0 });
  });

  it('refuses a file that is not a Ghost export, with the reason', () => {
    expect(() => parseGhostExport('not json')).toThrow(new GhostExportError('The file is not JSON: expected a Ghost content export'));
    expect(() => parseGhostExport('{"posts": []}')).toThrow(new GhostExportError('The file is not a Ghost export: expected {"db": [{"meta": {...}, "data": {...}}]}'));
    expect(() => parseGhostExport('{"db": [{"meta": {"version": "6.3.0"}, "data": {"posts": {}}}]}')).toThrow(new GhostExportError('The file is not a Ghost export: data.posts is missing'));
    expect(() => parseGhostExport('{"db": [{"meta": {"version": "6.3.0"}, "data": {"posts": [], "products": [1]}}]}')).toThrow(new GhostExportError('The Ghost export is malformed: data.products must be a list of objects'));
  });

  it('`gatehouse import ghost FILE` refuses a file that is not a Ghost export with exit 2, before opening the database', async () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'gh-ghost-'));
    try {
      const file = path.join(dir, 'members.csv');
      writeFileSync(file, 'email,name\na@example.com,A\n');
      const out: string[] = [];
      const err: string[] = [];
      const io = { stdout: (s: string) => void out.push(s), stderr: (s: string) => void err.push(s), env: { DATA_DIR: path.join(dir, 'data') } };
      expect(await runCli(['import', 'ghost', file], io)).toBe(2);
      expect(out).toEqual([]);
      expect(err.join('')).toBe('gatehouse import: The file is not JSON: expected a Ghost content export\n');
      err.length = 0;
      expect(await runCli(['import', 'ghost', path.join(dir, 'missing.json')], io)).toBe(2);
      expect(err.join('')).toMatch(/^gatehouse import: Cannot read .*missing\.json: ENOENT\n$/);
      err.length = 0;
      const huge = path.join(dir, 'huge.json');
      writeFileSync(huge, '');
      truncateSync(huge, 64_000_001);
      expect(await runCli(['import', 'ghost', huge], io)).toBe(2);
      expect(err.join('')).toBe(`gatehouse import: ${huge} is 64000001 bytes, over the 64 MB limit of a Ghost content export\n`);
      err.length = 0;
      expect(await runCli(['import', 'ghost'], io)).toBe(2);
      expect(err.join('')).toBe('gatehouse import: usage: gatehouse import ghost EXPORT.json\n');
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('export then import into a fresh database gives the same tiers, posts, pages and gates', async () => {
    const { export: exported } = await exportGhostContent(t.services.db, t.clock);
    const text = JSON.stringify(exported);
    const fresh = await createTestApp();
    try {
      await fresh.createUser({ email: 'owner@ledger.example.com', permission: 10 });
      const report = await runImport(fresh, text);
      expect(report.not_imported).toEqual([]);
      const tiersOf = (app: TestApp) => app.services.db.selectFrom('sbt_subscription_tiers').select(['sbt_name', 'sbt_display_name', 'sbt_tier_level', 'sbt_is_active', 'sbt_description']).orderBy('sbt_tier_level').execute();
      expect(await tiersOf(fresh)).toEqual(await tiersOf(t));
      const postsOf = (app: TestApp) =>
        (app.services.db as any)
          .selectFrom('pst_posts')
          .select(['pst_title', 'pst_link', 'pst_body', 'pst_is_published', 'pst_published_time', 'pst_short_description', 'pst_tier_min_level'])
          .orderBy('pst_link')
          .execute();
      expect(await postsOf(fresh)).toEqual(await postsOf(t));
      const pagesOf = (app: TestApp) => (app.services.db as any).selectFrom('pag_pages').select(['pag_title', 'pag_link', 'pag_published_time', 'pag_tier_min_level', 'pag_component_layout']).orderBy('pag_link').execute();
      expect(await pagesOf(fresh)).toEqual(await pagesOf(t));
      // The export of the copy carries the same Ghost fields (html, feature image, tags) as the first.
      const again = (await exportGhostContent(fresh.services.db, fresh.clock)).export.db[0].data;
      const strip = (posts: any[]) => posts.map(({ title, slug, html, plaintext, feature_image, status, visibility, custom_excerpt, published_at }) => ({ title, slug, html, plaintext, feature_image, status, visibility, custom_excerpt, published_at })).sort((a, b) => a.slug.localeCompare(b.slug));
      expect(strip(again.posts as any[])).toEqual(strip(exported.db[0].data.posts as any[]));
      expect((again.tags as any[]).map((x) => x.slug).sort()).toEqual(['deep-dives', 'news']);
    } finally {
      await fresh.close();
    }
  });

  it('the export is in Ghost shape: meta and data, the products as tiers and posts_products for tier gates', async () => {
    const { export: exported } = await exportGhostContent(t.services.db, t.clock);
    const [{ meta, data }] = exported.db;
    expect(meta).toEqual({ exported_on: t.clock.nowMs(), version: '6.0.0' });
    const product = (slug: string) => (data.products as any[]).find((p) => p.slug === slug);
    expect(product('gold')).toMatchObject({ id: '65f1a0c2d4e5f6a7b8c90004', name: 'Gold', type: 'paid', monthly_price: 2000, currency: 'usd', active: true });
    expect(product('free')).toMatchObject({ type: 'free', monthly_price: null });
    const post = (slug: string) => (data.posts as any[]).find((p) => p.slug === slug);
    expect([post('welcome').visibility, post('members-notes').visibility, post('paid-deep-dive').visibility, post('silver-and-up').visibility]).toEqual(['public', 'members', 'paid', 'tiers']);
    expect(post('welcome')).toMatchObject({ id: ghostId('welcome'), type: 'post', status: 'published', feature_image: 'https://ledger.example.com/content/images/2026/01/welcome.jpg', html: '<p>Welcome to the Ledger: opening words.</p><p>The rest of welcome for its readers.</p>' });
    expect(post('coming-next-month').status).toBe('scheduled');
    expect(post('unfinished-draft').status).toBe('draft');
    const silverUp = (data.posts_products as any[]).filter((l) => l.post_id === ghostId('silver-and-up')).map((l) => l.product_id);
    expect(silverUp).toEqual(['65f1a0c2d4e5f6a7b8c90003', '65f1a0c2d4e5f6a7b8c90004']);
  });
});

describe('/admin/import/ghost', () => {
  let t: TestApp;
  let admin: WebClient;

  beforeAll(async () => {
    t = await createTestApp();
    const a = await t.createUser({ permission: 10 });
    admin = await signIn(t, a.email, a.password);
  });
  afterAll(async () => t?.close());

  async function upload(body: string, token?: string) {
    const page = await admin.get('/admin/import/ghost');
    const form = multipart({ form_token: token ?? admin.formToken(page.body, '/admin/import/ghost') }, { name: 'export', filename: 'ghost.json', body });
    return t.request({ method: 'POST', url: '/admin/import/ghost', payload: form.payload, headers: { cookie: admin.jar.header(), 'content-type': form.contentType } });
  }

  it('is for superadmins only', async () => {
    const staff = await t.createUser({ permission: 5 });
    const c = await signIn(t, staff.email, staff.password);
    expect((await c.get('/admin/import/ghost')).statusCode).toBe(403);
    const page = await admin.get('/admin/import/ghost');
    expect(page.statusCode).toBe(200);
    expect(page.body).toContain('enctype="multipart/form-data"');
    expect(page.body).toContain('<a href="/admin/import/ghost">Import from Ghost</a>');
  });

  it('imports an uploaded export and shows the report; the author of unknown Ghost staff is the admin', async () => {
    const res = await upload(fixtureText);
    expect(res.statusCode, res.body).toBe(200);
    expect(res.body).toMatch(/<tr data-kind="post"><td>Posts<\/td><td data-label="Created">7<\/td><td data-label="Updated">0<\/td><td data-label="Unchanged">0<\/td><td data-label="Skipped">0<\/td><\/tr>/);
    expect(res.body).toContain('<li><strong>bronze-and-gold</strong> (post): for bronze, gold; gated at level 10, so also silver</li>');
    const again = await upload(fixtureText);
    expect(again.body).toMatch(/<tr data-kind="post"><td>Posts<\/td><td data-label="Created">0<\/td><td data-label="Updated">0<\/td><td data-label="Unchanged">7<\/td>/);
  });

  it('refuses a file that is not a Ghost export (400) and a stale form (403), writing nothing', async () => {
    const bad = await upload('{"hello": "world"}');
    expect(bad.statusCode).toBe(400);
    expect(bad.body).toContain('<p class="error" role="alert" id="import-error">The file is not a Ghost export: expected {&quot;db&quot;: [{&quot;meta&quot;: {...}, &quot;data&quot;: {...}}]}</p>');
    const stale = await upload(fixtureText, 'not-a-token');
    expect(stale.statusCode).toBe(403);
  });
});

// Each command opens a data directory and migrates it: the round trip runs a dozen commands.
describe(`gatehouse import ghost / export content (${onPostgres ? 'PostgreSQL' : 'embedded data directory'})`, { timeout: 120_000 }, () => {
  const cleanups: (() => Promise<void> | void)[] = [];
  afterAll(async () => {
    for (const c of cleanups.reverse()) await c();
  });

  /** A fresh install: its own data directory, or a scratch PostgreSQL database. */
  async function install(): Promise<NodeJS.ProcessEnv> {
    const data = tempDataDir('gh-ghost-cli-');
    cleanups.push(() => data.remove());
    if (!onPostgres) return { DATA_DIR: data.dir };
    const db = await scratchPostgres();
    cleanups.push(() => db.drop());
    return { DATA_DIR: data.dir, DATABASE_URL: db.url };
  }

  async function cli(env: NodeJS.ProcessEnv, ...args: string[]): Promise<any> {
    const out: string[] = [];
    const err: string[] = [];
    const code = await runCli(args, { stdout: (s) => void out.push(s), stderr: (s) => void err.push(s), env });
    expect(code, `${args.join(' ')}: ${err.join('')}`).toBe(0);
    return JSON.parse(out.join(''));
  }

  it('export then import into a fresh install gives the same posts, pages, tiers and gates', async () => {
    const first = await install();
    await cli(first, 'migrate');
    await cli(first, 'user', 'create', '--email', 'owner@ledger.example.com', '--password', 'long enough', '--permission', '10');
    const report = await cli(first, 'import', 'ghost', FIXTURE);
    expect(report.counts.post).toEqual({ created: 7, updated: 0, unchanged: 0, skipped: 0 });
    const out = path.join(first.DATA_DIR as string, 'content.json');
    expect(await cli(first, 'export', 'content', '--out', out)).toEqual({ out, posts: 7, pages: 2, tiers: 4, notes: [] });

    const second = await install();
    await cli(second, 'migrate');
    await cli(second, 'user', 'create', '--email', 'owner@ledger.example.com', '--password', 'long enough', '--permission', '10');
    const copied = await cli(second, 'import', 'ghost', out);
    expect(copied.counts).toEqual(report.counts);
    expect(copied.widened).toEqual([]);
    expect(copied.not_imported).toEqual([]);
    // The copy exports the same content: ids, bodies, statuses, gates (visibility and tiers) and tiers.
    const content = (env: NodeJS.ProcessEnv) =>
      cli(env, 'export', 'content').then((e) => {
        const { posts, products, posts_products } = e.db[0].data;
        return {
          posts: posts.map(({ id, title, slug, html, plaintext, type, status, visibility, published_at, custom_excerpt, feature_image }: any) => ({ id, title, slug, html, plaintext, type, status, visibility, published_at, custom_excerpt, feature_image })),
          products: products.map(({ id, name, slug, type, active, monthly_price }: any) => ({ id, name, slug, type, active, monthly_price })),
          posts_products: posts_products.map(({ post_id, product_id }: any) => ({ post_id, product_id })),
        };
      });
    const [a, b] = [await content(first), await content(second)];
    expect(b).toEqual(a);
    expect(a.posts.find((p: any) => p.slug === 'bronze-and-gold')).toMatchObject({ visibility: 'paid' });
    expect(a.posts.find((p: any) => p.slug === 'silver-and-up')).toMatchObject({ visibility: 'tiers' });
    expect(await cli(second, 'import', 'ghost', out)).toMatchObject({ counts: { tier: { created: 0, updated: 0, unchanged: 4, skipped: 0 }, post: { created: 0, updated: 0, unchanged: 7, skipped: 0 }, page: { created: 0, updated: 0, unchanged: 2, skipped: 0 } } });
  });
});

describe('Ghost content import and outbound events', () => {
  let t: TestApp;

  beforeAll(async () => {
    t = await createTestApp();
    await t.createUser({ email: 'owner@ledger.example.com', permission: 10 });
  });
  afterAll(async () => t?.close());

  it('announces no post.published for posts published on Ghost already; a scheduled post is announced once when its time comes', async () => {
    await runImport(t);
    const publications = async () =>
      (await t.services.db.selectFrom('obe_outbound_events').select('obe_payload').where('obe_type', '=', 'post.published').execute()).map(
        (r) => (typeof r.obe_payload === 'string' ? JSON.parse(r.obe_payload) : r.obe_payload) as { data: { post_id: number } },
      );
    await t.services.scheduler.runNow('post_publication_events');
    expect(await publications()).toEqual([]);
    const scheduled = (await localIds(t, 'post')).get(ghostId('coming-next-month'))!;
    t.clock.set('2030-01-01T09:00:01Z');
    await t.services.scheduler.runNow('post_publication_events');
    await t.services.scheduler.runNow('post_publication_events');
    const announced = await publications();
    expect(announced.map((e) => e.data.post_id)).toEqual([scheduled]);
  });
});
