import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Post } from '../../src/models/post.js';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { signIn, webClient, type WebClient } from '../helpers/browser-session.js';
import { createTier, type TestTier } from '../helpers/tiers.js';

const SECRET = 'The vault code is 7731.';

/** The editor's fields, as a browser posts them. */
const fields = (o: Record<string, string> = {}): Record<string, string> => ({
  title: '', link: '', body: '', excerpt: '', feature_image: '', status: 'publish', publish_at: '', on_homepage: 'true', tier_level: '', early_access_hours: '', ...o,
});

describe('posts and pages on the site', () => {
  let t: TestApp;
  let gold: TestTier;
  let staff: WebClient;
  let tierless: WebClient;
  let member: WebClient;
  let staffId: number;

  beforeAll(async () => {
    t = await createTestApp({ settings: { tier_gate_preview_length: 12 } });
    gold = await createTier(t, { name: 'gold', displayName: 'Gold', level: 20 });
    await createTier(t, { name: 'silver', displayName: 'Silver', level: 10 });
    const s = await t.createUser({ permission: 5 });
    staffId = s.userId;
    staff = await signIn(t, s.email, s.password);
    const r = await t.createUser();
    tierless = await signIn(t, r.email, r.password);
    const m = await t.createUser();
    await t.services.tiers.membership.assignManually(m.userId, gold.tierId, null);
    member = await signIn(t, m.email, m.password);
  });
  afterAll(async () => t.close());

  /** Submits the editor at `url` (its form's token read from the page first). */
  async function submit(url: string, o: Record<string, string>, action = url) {
    const page = await staff.get(url);
    expect(page.statusCode).toBe(200);
    return staff.postForm(action, { form_token: staff.formToken(page.body, action), ...fields(o) });
  }

  async function createPost(o: Record<string, string>): Promise<number> {
    const res = await submit('/admin/posts/new', o);
    expect(res.statusCode, res.body).toBe(303);
    return Number(/^\/admin\/posts\/(\d+)$/.exec(res.headers.location as string)![1]);
  }

  const row = (id: number) => (t.services.db as any).selectFrom('pst_posts').selectAll().where('pst_post_id', '=', id).executeTakeFirstOrThrow();

  describe('the staff editor', () => {
    it('creates and publishes a post: the slug is made from the title, the author and publish time stamped, post.published recorded', async () => {
      const id = await createPost({
        title: 'Hello, Wörld: first post',
        body: 'Intro with **bold**.\n\nSecond paragraph.',
        excerpt: 'A short summary.',
        feature_image: 'https://images.example.com/a.jpg',
        tier_level: '20',
        early_access_hours: '48',
      });
      expect(await row(id)).toMatchObject({
        pst_title: 'Hello, Wörld: first post',
        pst_link: 'hello-world-first-post',
        pst_usr_user_id: staffId,
        pst_body: 'Intro with **bold**.\n\nSecond paragraph.',
        pst_short_description: 'A short summary.',
        pst_feature_image: 'https://images.example.com/a.jpg',
        pst_is_published: true,
        pst_published_time: t.clock.now(),
        pst_is_on_homepage: true,
        pst_tier_min_level: 20,
        pst_tier_public_after_hours: 48,
        pst_delete_time: null,
      });
      const edit = await staff.get(`/admin/posts/${id}`);
      expect(edit.body).toContain('<p class="notice" role="status" id="post-saved">Post created, published.</p>');
      expect(edit.body).toContain(`<a href="/post/${id}" id="preview-link"`);
      const events = await (t.services.db as any).selectFrom('obe_outbound_events').selectAll().where('obe_type', '=', 'post.published').execute();
      expect(events.some((e: any) => JSON.stringify(e.obe_payload).includes(`"post_id":${id}`))).toBe(true);
    });

    it('keeps the API output to the contract: no feature image key on Post', async () => {
      const id = await createPost({ title: 'API shape', feature_image: '/static/x.png' });
      const { headers } = await t.staffHeaders();
      const res = await t.request({ method: 'GET', url: `/api/v1/Post/${id}`, headers });
      expect(res.statusCode).toBe(200);
      expect(Object.keys(res.json.data).sort()).toEqual([...Object.keys(Post.columns), 'tier_access'].sort());
    });

    it('refuses bad input field by field with 400, keeps what was typed, and saves nothing', async () => {
      await createPost({ title: 'Taken', link: 'taken-link' });
      const before = await (t.services.db as any).selectFrom('pst_posts').select((eb: any) => eb.fn.countAll().as('n')).executeTakeFirst();
      const res = await submit('/admin/posts/new', {
        title: 'Refused',
        link: 'taken-link',
        excerpt: 'x'.repeat(256),
        feature_image: 'javascript:alert(1)',
        tier_level: '15',
        early_access_hours: '-3',
        status: 'schedule',
        publish_at: '2026-02-01T09:00',
      });
      expect(res.statusCode).toBe(400);
      const error = (field: string) => new RegExp(`id="${field}-error" role="alert">([^<]*)<`).exec(res.body)?.[1];
      expect({
        link: error('link'),
        excerpt: error('excerpt'),
        feature_image: error('feature_image'),
        tier_level: error('tier_level'),
        early_access_hours: error('early_access_hours'),
        publish_at: error('publish_at'),
      }).toEqual({
        link: 'Another post already uses this link name.',
        excerpt: 'At most 255 characters.',
        feature_image: 'Enter an https:// address of an image, or a path on this site starting with /.',
        tier_level: 'Choose one of the listed tiers.',
        early_access_hours: 'Enter whole hours from 0 to 87600, or leave empty.',
        publish_at: 'Choose a time in the future, or choose Publish now.',
      });
      expect(res.body).toContain('value="Refused"');
      const after = await (t.services.db as any).selectFrom('pst_posts').select((eb: any) => eb.fn.countAll().as('n')).executeTakeFirst();
      expect(Number(after.n)).toBe(Number(before.n));

      const more = await submit('/admin/posts/new', { title: '', link: 'Not A Slug', status: 'sideways' });
      expect(more.statusCode).toBe(400);
      expect(more.body).toContain('id="title-error" role="alert">Enter a title.<');
      expect(more.body).toContain('id="link-error" role="alert">Use lower-case letters, digits and single hyphens, for example my-first-post.<');
      expect(more.body).toContain('id="status-error" role="alert">Choose Draft, Publish now or Schedule.<');
    });

    it('makes a title-made link name unique with a number', async () => {
      const a = await createPost({ title: 'Same title' });
      const b = await createPost({ title: 'Same title' });
      expect([(await row(a)).pst_link, (await row(b)).pst_link]).toEqual(['same-title', 'same-title-2']);
    });

    it('schedules a post: hidden from readers and the home page until the clock passes its time; staff preview it', async () => {
      const at = new Date(t.clock.nowMs() + 3 * 3600_000);
      const local = at.toISOString().slice(0, 16);
      const id = await createPost({ title: 'Scheduled news', link: 'scheduled-news', status: 'schedule', publish_at: local, body: 'Soon.' });
      expect(await row(id)).toMatchObject({ pst_is_published: true, pst_published_time: new Date(`${local}:00Z`) });
      const anon = webClient(t);
      expect((await anon.get('/p/scheduled-news')).statusCode).toBe(404);
      expect((await anon.get(`/post/${id}`)).statusCode).toBe(404);
      expect((await anon.get('/')).body).not.toContain('Scheduled news');
      const preview = await staff.get('/p/scheduled-news');
      expect(preview.statusCode).toBe(200);
      expect(preview.body).toContain('id="preview-notice"');
      expect((await staff.get('/admin/posts')).body).toMatch(new RegExp(`data-post="${id}"[\\s\\S]*?data-state="scheduled">Scheduled</span>`));

      t.clock.advance(3 * 3600_000 + 1000);
      try {
        expect((await anon.get('/p/scheduled-news')).statusCode).toBe(200);
        expect((await anon.get('/')).body).toContain('Scheduled news');
      } finally {
        t.clock.advance(-(3 * 3600_000 + 1000));
      }
    });

    it('edits: "Publish now" keeps the date of a published post; Draft takes it off the site', async () => {
      const id = await createPost({ title: 'Edit me', link: 'edit-me', body: 'v1' });
      const published = (await row(id)).pst_published_time;
      t.clock.advance(60_000);
      const res = await submit(`/admin/posts/${id}`, { title: 'Edited', link: 'edit-me', body: 'v2' });
      expect(res.statusCode).toBe(303);
      expect(await row(id)).toMatchObject({ pst_title: 'Edited', pst_body: 'v2', pst_published_time: published });
      expect((await submit(`/admin/posts/${id}`, { title: 'Edited', link: 'edit-me', status: 'draft' })).statusCode).toBe(303);
      expect(await row(id)).toMatchObject({ pst_is_published: false, pst_published_time: null });
      expect((await webClient(t).get('/p/edit-me')).statusCode).toBe(404);
      expect((await staff.get('/admin/posts')).body).toMatch(new RegExp(`data-post="${id}"[\\s\\S]*?data-state="draft">Draft</span>`));
    });

    it('deletes softly: the delete time is set, the post leaves the site, the list and the API', async () => {
      const id = await createPost({ title: 'Delete me', link: 'delete-me' });
      const res = await submit(`/admin/posts/${id}`, {}, `/admin/posts/${id}/delete`);
      expect(res.statusCode).toBe(303);
      expect(res.headers.location).toBe('/admin/posts');
      expect((await row(id)).pst_delete_time).toEqual(t.clock.now());
      expect((await webClient(t).get('/p/delete-me')).statusCode).toBe(404);
      expect((await staff.get('/admin/posts')).body).not.toContain(`data-post="${id}"`);
      expect((await staff.get(`/admin/posts/${id}`)).statusCode).toBe(404);
      const { headers } = await t.staffHeaders();
      expect((await t.request({ method: 'GET', url: `/api/v1/Post/${id}`, headers })).statusCode).toBe(400);
    });

    it('is for staff: anonymous visitors go to sign-in, members get 403, a post without the form token 403', async () => {
      const anon = await webClient(t).get('/admin/posts');
      expect(anon.statusCode).toBe(303);
      expect(anon.headers.location).toBe('/login?next=%2Fadmin%2Fposts');
      expect((await tierless.get('/admin/posts/new')).statusCode).toBe(403);
      expect((await tierless.get('/admin/pages')).statusCode).toBe(403);
      expect((await staff.postForm('/admin/posts/new', fields({ title: 'No token' }))).statusCode).toBe(403);
    });
  });

  describe('reading', () => {
    let gatedId: number;
    beforeAll(async () => {
      gatedId = await createPost({
        title: 'Gold insight',
        link: 'gold-insight',
        tier_level: '20',
        body: `Opening words here. ${SECRET}\n\n<script>alert(1)</script> and [a link](https://example.org/x) and [home](/p/x)`,
      });
    });

    it('an anonymous visitor sees the preview and the sign-in prompt at /p/{slug}', async () => {
      const res = await webClient(t).get('/p/gold-insight');
      expect(res.statusCode).toBe(200);
      expect(res.body).toContain('<article class="card content" id="post-preview"><p>Opening word…</p></article>');
      expect(res.body).toContain('id="gate-prompt"');
      expect(res.body).toContain('/login?next=%2Fp%2Fgold-insight');
      expect(res.body).toContain('<span class="badge" data-gate="20">for Gold</span>');
      expect(res.body).not.toContain('vault code');
    });

    it('a tierless member sees the upgrade prompt; a Gold member the whole body as safe HTML', async () => {
      const low = await tierless.get('/p/gold-insight');
      expect(low.body).toContain('Reading on needs the <strong>Gold</strong> tier or higher.');
      expect(low.body).not.toContain('vault code');
      const full = await member.get('/p/gold-insight');
      expect(full.body).toContain('id="post-body"');
      expect(full.body).toContain(SECRET);
      expect(full.body).toContain('<span class="badge open" data-gate="20">for Gold</span>');
      // Raw HTML comes out as text; links off the site are nofollow.
      expect(full.body).toContain('&lt;script&gt;alert(1)&lt;/script&gt;');
      expect(full.body).not.toContain('<script>alert(1)');
      expect(full.body).toContain('<a href="https://example.org/x" rel="noopener nofollow">a link</a>');
      expect(full.body).toContain('<a href="/p/x">home</a>');
      // The same post at /post/{id}.
      expect((await member.get(`/post/${gatedId}`)).body).toContain(SECRET);
      expect(full.headers['content-security-policy']).toContain("img-src 'self' data: https:");
    });

    it('the home page lists published posts newest first with the badge, and the RSS link in the head', async () => {
      const res = await webClient(t).get('/');
      expect(res.statusCode).toBe(200);
      expect(res.body).toContain('<link rel="alternate" type="application/rss+xml" href="/rss"');
      const titles = [...res.body.matchAll(/<h2><a href="([^"]+)">([^<]+)<\/a><\/h2>/g)].map((m) => m[2]);
      expect(titles[0]).toBe('Gold insight');
      const item = /<li class="card" data-post="(\d+)">[\s\S]*?<\/li>/.exec(res.body.slice(res.body.indexOf(`data-post="${gatedId}"`) - 30))![0];
      expect(item).toContain('<a href="/p/gold-insight">Gold insight</a>');
      expect(item).toContain('<span class="badge" data-gate="20">for Gold</span>');
      // The excerpt of a post the reader cannot open is its gate preview, never more.
      expect(item).toContain('<p class="excerpt">Opening word</p>');
      expect(res.body).not.toContain('vault code');
      // A signed-in member still sees who they are.
      expect((await member.get('/')).body).toContain('id="welcome"');
    });

    it('hides gated posts from readers who cannot open them while tier_gate_hide_from_listings is on', async () => {
      await t.services.settings.set('tier_gate_hide_from_listings', true);
      try {
        expect((await webClient(t).get('/')).body).not.toContain('Gold insight');
        expect((await tierless.get('/')).body).not.toContain('Gold insight');
        expect((await member.get('/')).body).toContain('Gold insight');
        expect((await staff.get('/')).body).toContain('Gold insight');
      } finally {
        await t.services.settings.set('tier_gate_hide_from_listings', false);
      }
    });

    it('pages the home page ten posts at a time', async () => {
      for (let i = 0; i < 11; i++) {
        t.clock.advance(1000);
        await createPost({ title: `Paged ${i}` });
      }
      const first = await webClient(t).get('/');
      expect(first.body.match(/<li class="card" data-post=/g)).toHaveLength(10);
      expect(first.body).toContain('<a href="/p/paged-10">Paged 10</a>');
      expect(first.body).toContain('id="older-posts"');
      const second = await webClient(t).get('/?page=2');
      expect(second.body).toContain('<a href="/p/paged-0">Paged 0</a>');
      expect(second.body).not.toContain('Paged 10');
      expect(second.body).toContain('id="newer-posts"');
    });
  });

  describe('pages', () => {
    it('staff write a gated page; /page/{slug} shows it by tier like a post', async () => {
      const page = await staff.get('/admin/pages/new');
      const res = await staff.postForm('/admin/pages/new', { form_token: staff.formToken(page.body, '/admin/pages/new'), ...fields({ title: 'Members area', body: `# Welcome\n\nInside. ${SECRET}`, tier_level: '20' }) });
      expect(res.statusCode).toBe(303);
      const id = Number(/^\/admin\/pages\/(\d+)$/.exec(res.headers.location as string)![1]);
      const stored = await (t.services.db as any).selectFrom('pag_pages').selectAll().where('pag_page_id', '=', id).executeTakeFirstOrThrow();
      expect(stored).toMatchObject({ pag_link: 'members-area', pag_published_time: t.clock.now(), pag_tier_min_level: 20, pag_usr_user_id: staffId });
      expect(stored.pag_component_layout).toEqual({ markdown: `# Welcome\n\nInside. ${SECRET}` });

      const anon = await webClient(t).get('/page/members-area');
      expect(anon.statusCode).toBe(200);
      expect(anon.body).toContain('This page is for members of the <strong>Gold</strong> tier or higher.');
      expect(anon.body).toContain('<p>Welcome Insi…</p>');
      expect(anon.body).not.toContain('vault code');
      expect((await tierless.get('/page/members-area')).body).not.toContain('vault code');
      const full = await member.get('/page/members-area');
      expect(full.body).toContain('<h1>Welcome</h1>');
      expect(full.body).toContain(SECRET);
      expect((await staff.get('/admin/pages')).body).toContain(`data-page="${id}"`);

      // A draft page is not found by readers.
      const edit = await staff.get(`/admin/pages/${id}`);
      expect((await staff.postForm(`/admin/pages/${id}`, { form_token: staff.formToken(edit.body, `/admin/pages/${id}`), ...fields({ title: 'Members area', link: 'members-area', status: 'draft' }) })).statusCode).toBe(303);
      expect((await member.get('/page/members-area')).statusCode).toBe(404);
      expect((await staff.get('/page/members-area')).body).toContain('id="preview-notice"');
    });
  });
});
