import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Kysely } from 'kysely';
import { pageBodySource, pageLayout } from '../../../models/content-body.js';
import type { Model, ModelContext, Row } from '../../../models/define.js';
import {
  PUBLISH_CHOICES,
  choosePublication,
  earlyAccessProblem,
  featureImageProblem,
  freeSlug,
  gateLevelProblem,
  gateTiers,
  publicationState,
  slugFromTitle,
  slugProblem,
  slugTaken,
  type ContentKind,
  type GateTier,
  type PublishChoice,
} from '../../../models/editorial.js';
import { Page } from '../../../models/page.js';
import { Post } from '../../../models/post.js';
import type { Services } from '../../../services.js';
import { checkValue } from '../../../surfaces/crud/coerce.js';
import { insertRow, loadRow, updateRow } from '../../../surfaces/crud/query.js';
import { stampTimes, updateRecord } from '../../../surfaces/crud/write.js';
import { flashNotice, setFlash, takeFlash } from '../../flash.js';
import { bodyChecked, bodyField, checkboxInput, checkPostedForm, fieldBlock, guardPage, hasBodyField, sendViewerPage, tokenInput, type Viewer } from '../../forms.js';
import { html, type SafeHtml } from '../../html.js';
import type { SignedInUser } from '../../viewer.js';
import { adminNav } from './nav.js';

type Staff = Viewer & { user: SignedInUser };
type Errors = Record<string, string>;

/** What differs between the post and the page editor: the model, its columns and where it is read. */
interface Kind {
  kind: ContentKind;
  model: Model;
  noun: 'post' | 'page';
  Noun: 'Post' | 'Page';
  base: '/admin/posts' | '/admin/pages';
  table: 'pst_posts' | 'pag_pages';
  id: string;
  title: string;
  link: string;
  level: string;
  hours: string;
  image: string;
  deleted: string;
  created: string;
  /** Excerpt and "on the home page" are post columns; a page has neither. */
  excerpt: string | null;
  homepage: string | null;
  publication(row: Row): { published: boolean; time: Date | null };
  body(row: Row): string;
  /** The columns that hold a publication and a body. */
  write(values: Row, p: { published: boolean; time: Date | null }, body: string): void;
  /** Where readers (and staff, previewing) see it. */
  url(row: Row): string;
}

const POST: Kind = {
  kind: 'post',
  model: Post,
  noun: 'post',
  Noun: 'Post',
  base: '/admin/posts',
  table: 'pst_posts',
  id: 'pst_post_id',
  title: 'pst_title',
  link: 'pst_link',
  level: 'pst_tier_min_level',
  hours: 'pst_tier_public_after_hours',
  image: 'pst_feature_image',
  deleted: 'pst_delete_time',
  created: 'pst_create_time',
  excerpt: 'pst_short_description',
  homepage: 'pst_is_on_homepage',
  publication: (row) => ({ published: row.pst_is_published === true, time: (row.pst_published_time as Date | null) ?? null }),
  body: (row) => (typeof row.pst_body === 'string' ? row.pst_body : ''),
  write(values, p, body) {
    values.pst_is_published = p.published;
    values.pst_published_time = p.time;
    values.pst_body = body;
  },
  url: (row) => `/post/${String(row.pst_post_id)}`,
};

const PAGE: Kind = {
  kind: 'page',
  model: Page,
  noun: 'page',
  Noun: 'Page',
  base: '/admin/pages',
  table: 'pag_pages',
  id: 'pag_page_id',
  title: 'pag_title',
  link: 'pag_link',
  level: 'pag_tier_min_level',
  hours: 'pag_tier_public_after_hours',
  image: 'pag_feature_image',
  deleted: 'pag_delete_time',
  created: 'pag_create_time',
  excerpt: null,
  homepage: null,
  // A page is published once its publish time is set and reached; a draft has none.
  publication: (row) => ({ published: row.pag_published_time !== null && row.pag_published_time !== undefined, time: (row.pag_published_time as Date | null) ?? null }),
  body: (row) => pageBodySource(row.pag_component_layout),
  write(values, p, body) {
    values.pag_published_time = p.published ? p.time : null;
    values.pag_component_layout = pageLayout(body);
  },
  url: (row) => `/page/${encodeURIComponent(String(row.pag_link ?? ''))}`,
};

/** The editor's fields as typed, so a refused form shows what was entered. */
interface ContentForm {
  title: string;
  link: string;
  body: string;
  excerpt: string;
  feature_image: string;
  status: string;
  publish_at: string;
  on_homepage: boolean;
  tier_level: string;
  early_access_hours: string;
}

const EMPTY_FORM: ContentForm = { title: '', link: '', body: '', excerpt: '', feature_image: '', status: 'draft', publish_at: '', on_homepage: true, tier_level: '', early_access_hours: '' };

const sentence = (message: string) => message.charAt(0).toUpperCase() + message.slice(1) + (message.endsWith('.') ? '' : '.');
const text = (v: unknown) => (v === null || v === undefined ? '' : String(v));

/** A time for a datetime-local input, in UTC (the editor says so). */
const localInput = (d: Date | null) => (d ? d.toISOString().slice(0, 16) : '');

/** A datetime-local value (YYYY-MM-DDTHH:MM, seconds optional) read as UTC; null when it is not one. */
function parseLocal(value: string): Date | null {
  const m = /^(\d{4})-(\d{2})-(\d{2})[T ](\d{2}):(\d{2})(?::(\d{2}))?$/.exec(value);
  if (!m) return null;
  const d = new Date(Date.UTC(+m[1]!, +m[2]! - 1, +m[3]!, +m[4]!, +m[5]!, +(m[6] ?? 0)));
  return d.toISOString().slice(0, 16) === `${m[1]}-${m[2]}-${m[3]}T${m[4]}:${m[5]}` ? d : null;
}

const UTC = new Intl.DateTimeFormat('en-GB', { timeZone: 'UTC', day: 'numeric', month: 'short', year: 'numeric', hour: '2-digit', minute: '2-digit' });

function formFromRow(kind: Kind, row: Row, now: Date): ContentForm {
  const p = kind.publication(row);
  const state = publicationState(p, now);
  return {
    title: text(row[kind.title]),
    link: text(row[kind.link]),
    body: kind.body(row),
    excerpt: kind.excerpt ? text(row[kind.excerpt]) : '',
    feature_image: text(row[kind.image]),
    status: state === 'published' ? 'publish' : state === 'scheduled' ? 'schedule' : 'draft',
    publish_at: localInput(p.time),
    on_homepage: kind.homepage ? row[kind.homepage] !== false : true,
    tier_level: text(row[kind.level]),
    early_access_hours: text(row[kind.hours]),
  };
}

function formFromRequest(request: FastifyRequest): ContentForm {
  return {
    title: bodyField(request, 'title').trim(),
    link: bodyField(request, 'link').trim(),
    body: bodyField(request, 'body').replace(/\r\n/g, '\n'),
    excerpt: bodyField(request, 'excerpt').trim(),
    feature_image: bodyField(request, 'feature_image').trim(),
    status: bodyField(request, 'status'),
    publish_at: bodyField(request, 'publish_at').trim(),
    on_homepage: hasBodyField(request, 'on_homepage') ? bodyChecked(request, 'on_homepage') : true,
    tier_level: bodyField(request, 'tier_level').trim(),
    early_access_hours: bodyField(request, 'early_access_hours').trim(),
  };
}

/** A column's own check (the model's type and length): the value, or the refusal put on `field`. */
function columnValue(model: Model, column: string, raw: string, field: string, errors: Errors): unknown {
  const checked = checkValue(column, model.columns[column]!, raw);
  if ('error' in checked) {
    errors[field] = sentence(checked.error);
    return undefined;
  }
  return checked.value;
}

function wholeNumber(raw: string): number | null | 'bad' {
  if (raw === '') return null;
  return /^\d{1,9}$/.test(raw) ? Number(raw) : 'bad';
}

/**
 * The posted form checked field by field, against the model's columns and the editorial rules
 * (models/editorial.ts). `values` holds what would be stored; every refusal is kept for its field.
 */
async function readForm(db: Kysely<any>, kind: Kind, form: ContentForm, stored: Row | null, tiers: readonly GateTier[], now: Date): Promise<{ values: Row; errors: Errors }> {
  const values: Row = {};
  const errors: Errors = {};
  const storedId = stored ? Number(stored[kind.id]) : null;

  if (form.title === '') errors.title = 'Enter a title.';
  else values[kind.title] = columnValue(kind.model, kind.title, form.title, 'title', errors);

  if (form.link === '') {
    // Made from the title, and made unique: a typed link name is never changed behind the editor's back.
    if (form.title !== '') values[kind.link] = await freeSlug(db, kind.kind, slugFromTitle(form.title, kind.noun), storedId);
  } else {
    const problem = stored && stored[kind.link] === form.link ? null : slugProblem(form.link);
    if (problem) errors.link = problem;
    else if (await slugTaken(db, kind.kind, form.link, storedId)) errors.link = `Another ${kind.noun} already uses this link name.`;
    else values[kind.link] = form.link;
  }

  if (form.body.includes('\u0000')) errors.body = 'The text contains a NUL character.';

  if (kind.excerpt) values[kind.excerpt] = columnValue(kind.model, kind.excerpt, form.excerpt, 'excerpt', errors);
  if (kind.homepage) values[kind.homepage] = form.on_homepage;

  const imageProblem = featureImageProblem(form.feature_image);
  if (imageProblem) errors.feature_image = imageProblem;
  else values[kind.image] = form.feature_image === '' ? null : form.feature_image;

  const level = wholeNumber(form.tier_level);
  const levelProblem = level === 'bad' ? 'Choose one of the listed tiers.' : gateLevelProblem(level, tiers);
  if (levelProblem) errors.tier_level = levelProblem;
  else values[kind.level] = level;

  const hours = wholeNumber(form.early_access_hours);
  const hoursProblem = hours === 'bad' ? earlyAccessProblem(-1) : earlyAccessProblem(hours);
  if (hoursProblem) errors.early_access_hours = hoursProblem;
  else values[kind.hours] = hours;

  if (!PUBLISH_CHOICES.includes(form.status as PublishChoice)) {
    errors.status = 'Choose Draft, Publish now or Schedule.';
  } else {
    const at = form.publish_at === '' ? null : parseLocal(form.publish_at);
    if (form.status === 'schedule' && form.publish_at !== '' && at === null) {
      errors.publish_at = 'Enter a date and time such as 2026-12-01 09:00.';
    } else {
      const p = choosePublication(form.status as PublishChoice, at, stored ? kind.publication(stored) : null, now);
      if ('error' in p) errors.publish_at = p.error;
      else kind.write(values, p, form.body);
    }
  }
  return { values, errors };
}

function statusCell(kind: Kind, row: Row, now: Date): SafeHtml {
  const p = kind.publication(row);
  const state = publicationState(p, now);
  if (state === 'draft') return html`<span class="state" data-state="draft">Draft</span>`;
  return html`<span class="state" data-state="${state}">${state === 'scheduled' ? 'Scheduled' : 'Published'}</span>${p.time ? html` <span class="time">${UTC.format(p.time)} UTC</span>` : ''}`;
}

function gateCell(kind: Kind, row: Row, tiers: readonly GateTier[]): string {
  const level = row[kind.level];
  if (level === null || level === undefined) return 'Everyone';
  const tier = tiers.find((t) => t.level === Number(level));
  const hours = row[kind.hours];
  const name = tier ? `${tier.display_name} and higher` : `Level ${String(level)} (no tier)`;
  return hours === null || hours === undefined ? name : `${name}, public after ${String(hours)} h`;
}

/** Admin → Posts and Admin → Pages: the lists, and the editor (create, edit, publish, schedule, delete). */
export function contentAdminPages(web: FastifyInstance, services: Services): void {
  const { clock, settings } = services;
  const db = services.db as unknown as Kysely<any>;

  const modelContext = (viewer: Staff): ModelContext => ({
    db: services.db,
    clock,
    settings,
    featureRegistry: services.tiers.registry,
    viewer: { current_user_id: viewer.user.usr_user_id, current_user_permission: viewer.user.usr_permission },
    caches: services.modelCaches,
  });

  const idOf = (request: FastifyRequest): number | null => {
    const raw = (request.params as { id: string }).id;
    return /^\d{1,15}$/.test(raw) && Number(raw) > 0 ? Number(raw) : null;
  };

  /** The whole stored row (with the site's feature image, which the model does not declare). */
  const editorRow = async (kind: Kind, id: number | null): Promise<Row | undefined> =>
    id === null ? undefined : ((await db.selectFrom(kind.table).selectAll().where(kind.id, '=', id).where(kind.deleted, 'is', null).executeTakeFirst()) as Row | undefined);

  const notFound = (reply: FastifyReply, viewer: Viewer, kind: Kind) => sendViewerPage(reply, viewer, 'Not found', html`${adminNav()}<div class="card"><p>There is no such ${kind.noun}.</p></div>`, 404);

  function tierSelect(value: string, tiers: readonly GateTier[]): SafeHtml {
    const known = value === '' || tiers.some((t) => String(t.level) === value);
    return html`<select id="tier_level" name="tier_level"><option value="" ${value === '' ? html`selected` : ''}>Everyone (no gate)</option>${tiers.map(
      (t) => html`<option value="${t.level}" ${value === String(t.level) ? html`selected` : ''}>${t.display_name} and higher (level ${t.level})${t.active ? '' : ' — inactive tier'}</option>`,
    )}${known ? '' : html`<option value="${value}" selected>Level ${value}: no tier has it now, choose another</option>`}</select>`;
  }

  function statusControl(form: ContentForm, noun: string): SafeHtml {
    const radio = (value: PublishChoice, label: string) =>
      html`<label class="choice"><input type="radio" name="status" id="status-${value}" value="${value}" ${form.status === value ? html`checked` : ''}> ${label}</label>`;
    return html`<fieldset class="publication"><legend>Publication</legend>
  ${radio('draft', `Draft (only staff see it)`)}
  ${radio('publish', `Publish now (an already published ${noun} keeps its date)`)}
  ${radio('schedule', 'Schedule for the time below')}
</fieldset>`;
  }

  async function renderEditor(reply: FastifyReply, viewer: Staff, kind: Kind, row: Row | null, form: ContentForm, errors: Errors, opts: { status?: number; notice?: SafeHtml | '' } = {}) {
    const tiers = await gateTiers(services.db);
    const id = row ? String(row[kind.id]) : null;
    const action = id ? `${kind.base}/${id}` : `${kind.base}/new`;
    const block = (name: string, label: string, control: SafeHtml, help?: string) => fieldBlock(name, label, control, errors[name], help);
    const body = html`${adminNav()}
<style>fieldset.publication{border:1px solid #dde1e6;border-radius:6px;margin:.75rem 0;padding:.5rem .75rem}fieldset.publication legend{font-weight:600}label.choice{font-weight:400;margin:.35rem 0;display:flex;gap:.5rem;align-items:flex-start}label.choice input{margin-top:.3rem}textarea#body{min-height:16rem;font-family:ui-monospace,SFMono-Regular,Menlo,monospace;font-size:.95rem}.editor-links{display:flex;flex-wrap:wrap;gap:1rem}input#publish_at{width:100%;max-width:16rem;padding:.5rem;border:1px solid #b8c0cc;border-radius:4px;font:inherit}</style>
<p class="editor-links"><a href="${kind.base}">← All ${kind.noun}s</a>${row ? html`<a href="${kind.url(row)}" id="preview-link" target="_blank" rel="noopener">Preview</a>` : ''}</p>
${opts.notice ?? ''}
${Object.keys(errors).length ? html`<p class="error" role="alert" id="form-error">Nothing was saved: fix the fields marked below.</p>` : ''}
<div class="card"><form method="post" action="${action}" novalidate id="content-form">
  ${tokenInput(viewer, `${kind.noun}-edit`)}
  ${block('title', 'Title', html`<input id="title" name="title" type="text" maxlength="255" required value="${form.title}">`)}
  ${block('link', 'Link name', html`<input id="link" name="link" type="text" maxlength="255" autocapitalize="none" spellcheck="false" value="${form.link}">`, `The ${kind.noun}'s address: ${kind.kind === 'post' ? '/p/' : '/page/'}link-name. Left empty, it is made from the title.`)}
  ${block('body', 'Text', html`<textarea id="body" name="body" rows="16">
${form.body}</textarea>`, 'Markdown: a blank line between paragraphs, **bold**, _italic_, [a link](https://example.com), ## a heading, - a list item, ![an image](https://example.com/a.jpg). HTML tags are shown as text.')}
  ${kind.excerpt ? block('excerpt', 'Excerpt', html`<textarea id="excerpt" name="excerpt" rows="2" maxlength="255">
${form.excerpt}</textarea>`, 'Shown on the home page under the title (255 characters at most). Empty: the start of the text, for readers who may read it.') : ''}
  ${block('feature_image', 'Feature image URL', html`<input id="feature_image" name="feature_image" type="url" inputmode="url" maxlength="1000" value="${form.feature_image}">`, 'An https:// address of an image, or a path on this site. Shown above the text and on the home page.')}
  ${statusControl(form, kind.noun)}
  ${errors.status ? html`<div class="field-error" id="status-error" role="alert">${errors.status}</div>` : ''}
  ${block('publish_at', 'Publish at (UTC)', html`<input id="publish_at" name="publish_at" type="datetime-local" value="${form.publish_at}">`, 'Used with “Schedule”: the time, in UTC, at which it appears for readers.')}
  ${kind.homepage ? fieldBlock('on_homepage', 'Show on the home page', checkboxInput('on_homepage', form.on_homepage)) : ''}
  <h2>Who can read it</h2>
  ${block('tier_level', 'Tier gate', tierSelect(form.tier_level, tiers), `Readers below this tier see the preview (${settings.int('tier_gate_preview_length')} characters, the setting tier_gate_preview_length) and an upgrade prompt. Staff always see everything.`)}
  ${block('early_access_hours', 'Early access (hours)', html`<input id="early_access_hours" name="early_access_hours" type="number" min="0" step="1" inputmode="numeric" value="${form.early_access_hours}">`, 'With a gate: the tier sees it first, and this many hours after publication it opens to everyone. Empty: it stays gated.')}
  <button class="primary" type="submit">${row ? `Save ${kind.noun}` : `Create ${kind.noun}`}</button>
</form></div>
${row
  ? html`<div class="card"><h2>Delete</h2><p class="help">The ${kind.noun} disappears from the site and the API (a soft delete: the row is kept).</p>
<form method="post" action="${kind.base}/${id}/delete" data-confirm="Delete this ${kind.noun}?">${tokenInput(viewer, `${kind.noun}-delete`)}<button class="secondary danger" type="submit" id="delete-${kind.noun}">Delete ${kind.noun}</button></form></div>`
  : ''}`;
    return sendViewerPage(reply, viewer, row ? `${kind.Noun}: ${form.title || text(row[kind.title]) || 'Untitled'}` : `New ${kind.noun}`, body, opts.status ?? 200);
  }

  for (const kind of [POST, PAGE]) {
    web.get(kind.base, async (request, reply) => {
      const viewer = await guardPage(request, reply, services, 5);
      if (!viewer) return reply;
      const now = clock.now();
      const tiers = await gateTiers(services.db);
      const rows = (await db.selectFrom(kind.table).selectAll().where(kind.deleted, 'is', null).orderBy(kind.created, 'desc').orderBy(kind.id, 'desc').limit(500).execute()) as Row[];
      const notice = flashNotice(await takeFlash(services.db, viewer.session));
      const body = html`${adminNav()}
${notice}
<p><a href="${kind.base}/new" id="new-${kind.noun}">New ${kind.noun}</a></p>
<div class="card">
${rows.length === 0
  ? html`<p>No ${kind.noun}s yet.</p>`
  : html`<table id="${kind.noun}s" class="stack"><thead><tr><th>Title</th><th>Status</th><th>Gate</th><th></th></tr></thead><tbody>
${rows.map(
  (r) => html`<tr data-${kind.noun}="${String(r[kind.id])}"><td class="title"><a href="${kind.base}/${String(r[kind.id])}">${text(r[kind.title]) || 'Untitled'}</a></td>
<td class="status" data-label="Status">${statusCell(kind, r, now)}</td><td class="gate" data-label="Gate">${gateCell(kind, r, tiers)}</td>
<td class="actions"><a href="${kind.url(r)}">View</a></td></tr>`,
)}
</tbody></table>`}
</div>`;
      return sendViewerPage(reply, viewer, kind.Noun === 'Post' ? 'Posts' : 'Pages', body);
    });

    web.get(`${kind.base}/new`, async (request, reply) => {
      const viewer = await guardPage(request, reply, services, 5);
      if (!viewer) return reply;
      return renderEditor(reply, viewer, kind, null, EMPTY_FORM, {});
    });

    web.post(`${kind.base}/new`, async (request, reply) => {
      const viewer = await guardPage(request, reply, services, 5);
      if (!viewer) return reply;
      if (!(await checkPostedForm(request, reply, viewer, `${kind.noun}-edit`))) return reply;
      const form = formFromRequest(request);
      const now = clock.now();
      const { values, errors } = await readForm(db, kind, form, null, await gateTiers(services.db), now);
      if (Object.keys(errors).length > 0) return renderEditor(reply, viewer, kind, null, form, errors, { status: 400 });
      const ctx = modelContext(viewer);
      const id = await services.db.transaction().execute(async (trx) => {
        if (kind.model.owner) values[kind.model.owner] = viewer.user.usr_user_id;
        stampTimes(kind.model, values, now, true);
        const created = await insertRow(trx, kind.model, values);
        const row = await loadRow(trx, kind.model, created);
        if (row) await kind.model.afterWrite?.({ op: 'create', id: created, before: null, after: row }, { ...ctx, trx });
        return created;
      });
      await setFlash(services.db, viewer.session, { id: `${kind.noun}-saved`, text: `${kind.Noun} created${savedState(kind, values, now)}.` });
      return reply.redirect(`${kind.base}/${id}`, 303);
    });

    web.get(`${kind.base}/:id`, async (request, reply) => {
      const viewer = await guardPage(request, reply, services, 5);
      if (!viewer) return reply;
      const row = await editorRow(kind, idOf(request));
      if (!row) return notFound(reply, viewer, kind);
      return renderEditor(reply, viewer, kind, row, formFromRow(kind, row, clock.now()), {}, { notice: flashNotice(await takeFlash(services.db, viewer.session)) });
    });

    web.post(`${kind.base}/:id`, async (request, reply) => {
      const viewer = await guardPage(request, reply, services, 5);
      if (!viewer) return reply;
      if (!(await checkPostedForm(request, reply, viewer, `${kind.noun}-edit`))) return reply;
      const id = idOf(request);
      const row = await editorRow(kind, id);
      if (!row || id === null) return notFound(reply, viewer, kind);
      const form = formFromRequest(request);
      const now = clock.now();
      const { values, errors } = await readForm(db, kind, form, row, await gateTiers(services.db), now);
      if (Object.keys(errors).length > 0) return renderEditor(reply, viewer, kind, row, form, errors, { status: 400 });
      const ctx = modelContext(viewer);
      const saved = await services.db.transaction().execute(async (trx) => {
        const stored = await loadRow(trx, kind.model, id, true);
        if (!stored) return false;
        await updateRecord(trx, kind.model, id, stored, values, ctx);
        return true;
      });
      if (!saved) return notFound(reply, viewer, kind);
      await setFlash(services.db, viewer.session, { id: `${kind.noun}-saved`, text: `${kind.Noun} saved${savedState(kind, values, now)}.` });
      return reply.redirect(`${kind.base}/${id}`, 303);
    });

    // Soft delete: the delete time is set, as the API's DELETE does.
    web.post(`${kind.base}/:id/delete`, async (request, reply) => {
      const viewer = await guardPage(request, reply, services, 5);
      if (!viewer) return reply;
      if (!(await checkPostedForm(request, reply, viewer, `${kind.noun}-delete`))) return reply;
      const id = idOf(request);
      const ctx = modelContext(viewer);
      const deleted = id === null ? false : await services.db.transaction().execute(async (trx) => {
        const stored = await loadRow(trx, kind.model, id, true);
        if (!stored) return false;
        const changes: Row = { [kind.deleted]: clock.now() };
        stampTimes(kind.model, changes, clock.now(), false);
        await updateRow(trx, kind.model, id, changes);
        await kind.model.afterWrite?.({ op: 'delete', id, before: stored, after: { ...stored, ...changes } }, { ...ctx, trx });
        return true;
      });
      if (!deleted) return notFound(reply, viewer, kind);
      await setFlash(services.db, viewer.session, { id: `${kind.noun}-deleted`, text: `${kind.Noun} deleted.` });
      return reply.redirect(kind.base, 303);
    });
  }
}

/** What a save did to readers, for the notice: ", published", ", scheduled for ..." or ", as a draft". */
function savedState(kind: Kind, values: Row, now: Date): string {
  const p = kind.publication({ ...values, pag_published_time: values.pag_published_time ?? null });
  const state = publicationState(p, now);
  if (state === 'draft') return ' as a draft';
  return state === 'scheduled' ? `, scheduled for ${UTC.format(p.time!)} UTC` : ', published';
}
