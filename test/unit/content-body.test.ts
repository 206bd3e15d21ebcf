import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { bodyHtml, bodyPreview, bodyText, pageBodySource } from '../../src/models/content-body.js';
import { choosePublication, featureImageProblem, publicationState, slugFromTitle, slugProblem } from '../../src/models/editorial.js';

describe('post and page bodies', () => {
  it('render Markdown with raw HTML as text and nofollow on links off the site', () => {
    expect(bodyHtml('Hi **there**\n\n<img src=x onerror=alert(1)>\n\n[x](javascript:alert(1)) [o](https://e.org/) [i](/p/a)')).toBe(
      '<p>Hi <strong>there</strong></p>\n<p>&lt;img src=x onerror=alert(1)&gt;</p>\n<p>[x](javascript:alert(1)) <a href="https://e.org/" rel="noopener nofollow">o</a> <a href="/p/a">i</a></p>\n',
    );
  });

  it('show an HTML body as paragraphs of its text, never as markup', () => {
    expect(bodyHtml('<p>One <b>bold</b></p><p>Two &amp; <script>x()</script>three</p>')).toBe('<p>One bold</p>\n<p>Two &amp; three</p>');
  });

  it('property: no tag other than markdown-it’s own ever leaves the renderer', () => {
    const allowed = new Set(['p', 'strong', 'em', 'a', 'h1', 'h2', 'h3', 'h4', 'h5', 'h6', 'ul', 'ol', 'li', 'code', 'pre', 'blockquote', 'hr', 'br', 'img', 's', 'table', 'thead', 'tbody', 'tr', 'th', 'td']);
    fc.assert(
      fc.property(fc.array(fc.constantFrom('<script>', '<iframe src=x>', '<a href="javascript:x">', '**', '[a](b)', '![i](j)', '\n\n', '# ', '<', '>', '"', 'x', ' ', '`', '<svg onload=x>'), { maxLength: 30 }), (parts) => {
        const out = bodyHtml(parts.join(''));
        for (const [, name] of out.matchAll(/<\/?([a-zA-Z0-9]+)/g)) expect(allowed.has(name!.toLowerCase()), `${name} in ${out}`).toBe(true);
        for (const [tag] of out.matchAll(/<[a-zA-Z][^>]*>/g)) {
          expect(tag, out).not.toMatch(/\son[a-z]+=/i);
          expect(tag, out).not.toContain('javascript:');
        }
      }),
    );
  });

  it('give the reader’s text for previews: Markdown without its markup', () => {
    expect(bodyText('# Title\n\nSome **bold** & <b>text</b>')).toBe('Title Some bold & <b>text</b>');
    expect(bodyPreview('# Title\n\nSome **bold**', 9)).toBe('Title Som');
    expect(bodyPreview('anything', 0)).toBeNull();
  });

  it('read a page body from the editor’s layout or the Ghost import’s', () => {
    expect(pageBodySource({ markdown: '# A' })).toBe('# A');
    expect(pageBodySource('{"plaintext":"plain","html":"<p>x</p>"}')).toBe('plain');
    expect(pageBodySource({ html: '<p>Only <b>html</b></p>' })).toBe('Only html');
    expect(pageBodySource(null)).toBe('');
  });
});

describe('editorial rules', () => {
  const now = new Date('2026-03-01T12:00:00Z');
  const later = new Date('2026-03-02T08:00:00Z');
  const earlier = new Date('2026-02-01T08:00:00Z');

  it('make link names from titles and check typed ones', () => {
    expect(slugFromTitle('Ça va? Été 2026 — notes!', 'post')).toBe('ca-va-ete-2026-notes');
    expect(slugFromTitle('!!!', 'post')).toBe('post');
    expect(slugProblem('good-slug-2')).toBeNull();
    expect(slugProblem('Bad Slug')).not.toBeNull();
    expect(slugProblem('double--hyphen')).not.toBeNull();
  });

  it('publish now, schedule ahead, keep the date of a published item, refuse a past schedule', () => {
    expect(choosePublication('publish', null, null, now)).toEqual({ published: true, time: now });
    expect(choosePublication('publish', null, { published: true, time: earlier }, now)).toEqual({ published: true, time: earlier });
    expect(choosePublication('publish', null, { published: true, time: later }, now)).toEqual({ published: true, time: now });
    expect(choosePublication('schedule', later, null, now)).toEqual({ published: true, time: later });
    expect(choosePublication('schedule', earlier, null, now)).toEqual({ error: 'Choose a time in the future, or choose Publish now.' });
    expect(choosePublication('schedule', null, null, now)).toEqual({ error: 'Enter the date and time to publish at.' });
    expect(choosePublication('draft', later, { published: true, time: earlier }, now)).toEqual({ published: false, time: null });
    expect([publicationState({ published: true, time: later }, now), publicationState({ published: true, time: null }, now), publicationState({ published: false, time: earlier }, now)]).toEqual(['scheduled', 'published', 'draft']);
  });

  it('take https image addresses and site paths only', () => {
    expect(featureImageProblem('https://cdn.example.com/a.jpg')).toBeNull();
    expect(featureImageProblem('/static/a.png')).toBeNull();
    expect(featureImageProblem('')).toBeNull();
    for (const bad of ['http://x.com/a.jpg', 'javascript:alert(1)', '//evil.com/a.png', 'data:image/png;base64,AA', '__GHOST_URL__/content/images/a.jpg', '/a b.png']) expect(featureImageProblem(bad), bad).not.toBeNull();
  });
});
