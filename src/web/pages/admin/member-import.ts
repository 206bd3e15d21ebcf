import type { Readable } from 'node:stream';
import type { FastifyInstance, FastifyReply } from 'fastify';
import { exportMembers } from '../../../accounts/member-import/export.js';
import { checkMemberCsv, importMembers, type ImportSummary, type RowReport } from '../../../accounts/member-import/import.js';
import { createImportJob, readImportJob, type ImportJobView } from '../../../accounts/member-import/jobs.js';
import { checkFormToken, formToken } from '../../../accounts/web-sessions.js';
import { memberImportDeps, memberImportRunner, notCsvRefusal } from '../../../actions/members/import-shared.js';
import { findPurposeFile, openPurposeFile, PurposeFileTooLarge, storePurposeFile } from '../../../drive/uploads/purpose-files.js';
import { MEMBER_IMPORT_PURPOSE } from '../../../drive/uploads/purposes.js';
import type { Services } from '../../../services.js';
import { bodyField, checkPostedForm, guardPage, sendViewerPage, tokenInput, type Viewer } from '../../forms.js';
import { html, type SafeHtml } from '../../html.js';
import { adminNav } from './nav.js';

const FORM_NAME = 'member-import';
const PREVIEW_ROWS = 200;
const OUTCOME_LABELS: Record<string, string> = { create: 'Create', update: 'Update', unchanged: 'Unchanged', error: 'Skipped' };

const idParam = (raw: unknown) => (typeof raw === 'string' && /^\d{1,12}$/.test(raw) ? Number(raw) : null);

function countsLine(c: ImportSummary['counts']): SafeHtml {
  return html`<span class="count-create">${c.create} to create</span> · <span class="count-update">${c.update} to update</span> · <span class="count-unchanged">${c.unchanged} unchanged</span> · <span class="count-error">${c.error} skipped</span>`;
}

/** What a row changes, in words: "name, subscribed to emails, tier: Gold Tier". */
function details(r: RowReport): string {
  const changes = (r.changes ?? []).map((c) => (c === 'tier' ? `tier: ${r.tier ?? ''}` : c.replace(/_/g, ' ')));
  return [...changes, ...(r.notes ?? [])].join(', ') || '—';
}

function rowsTable(id: string, rows: RowReport[]): SafeHtml {
  return html`<div style="overflow-x:auto"><table id="${id}" class="stack"><thead><tr><th>Line</th><th>Email</th><th>Outcome</th><th>Details</th></tr></thead><tbody>
${rows.map((r) => html`<tr data-line="${r.line}" data-outcome="${r.outcome}"><td data-label="Line">${r.line}</td><td data-label="Email">${r.email || '—'}</td><td data-label="Outcome">${OUTCOME_LABELS[r.outcome] ?? r.outcome}</td>
<td data-label="Details">${r.outcome === 'error' ? r.message ?? '' : details(r)}</td></tr>`)}
</tbody></table></div>`;
}

function columnsNote(s: Pick<ImportSummary, 'unknown_columns' | 'not_carried'>): SafeHtml {
  return html`${s.unknown_columns.length > 0 ? html`<p class="help" id="unknown-columns">Columns ignored (not known here): ${s.unknown_columns.join(', ')}.</p>` : ''}
${s.not_carried.length > 0 ? html`<p class="help" id="not-carried">Read past (no place for them here): ${s.not_carried.join(', ')}.</p>` : ''}`;
}

function progressBlock(job: ImportJobView): SafeHtml {
  const pct = Math.round(job.progress * 100);
  return html`<div id="job" data-job="${job.job_id}" data-status="${job.status}">
  <p><strong id="job-status">${job.status === 'done' ? 'Done' : job.status === 'failed' ? 'Failed' : job.status === 'queued' ? 'Waiting to start' : 'Importing'}</strong>${job.dry_run ? ' (dry run)' : ''}</p>
  <progress id="import-progress" max="100" value="${pct}" style="width:100%;height:1.25rem">${pct}%</progress>
  <p id="job-counts"><span id="job-rows">${job.rows}</span> rows read: ${job.counts.create} created · ${job.counts.update} updated · ${job.counts.unchanged} unchanged · ${job.counts.error} skipped</p>
  ${job.error ? html`<p class="error" id="job-error" role="alert">${job.error}</p>` : ''}
</div>`;
}

/**
 * Admin → Members → Import and export (DESIGN 16): upload a member CSV (Ghost's export columns), see per
 * row what the import will do, run it with a progress bar, and download every member in the same columns.
 * The upload is stored as a file of the member_import upload purpose, as the API's upload endpoints store
 * it; the run is the same job member_import_run queues, started here at once.
 */
export function memberImportPages(web: FastifyInstance, services: Services): void {
  const { db } = services;
  const runner = memberImportRunner(services);
  const base = '/admin/members/import';

  async function page(reply: FastifyReply, viewer: Viewer & { user: { usr_user_id: number } }, opts: { preview?: { fileId: number; name: string | null; summary: ImportSummary } | null; error?: string; status?: number } = {}) {
    const { preview } = opts;
    const body = html`${adminNav()}
${opts.error ? html`<p class="error" id="import-error" role="alert">${opts.error}</p>` : ''}
<div class="card">
  <h2>Import a member CSV</h2>
  <p class="help">A CSV with an <code>email</code> column, such as Ghost's member export (id, email, name, note, subscribed_to_emails, complimentary_plan, stripe_customer_id, created_at, deleted_at, labels, tiers). Members are matched by email, so importing the same file twice changes nothing. Passwords are never imported: members sign in with a password reset link.</p>
  <form id="upload-form" method="post" action="${base}/upload" enctype="application/octet-stream" data-token="${viewer.session ? formToken(viewer.session, FORM_NAME) : ''}">
    <div class="field"><label for="csv-file">CSV file</label><input id="csv-file" name="file" type="file" accept=".csv,text/csv" required></div>
    <button class="primary" type="submit" id="upload-button">Upload and preview</button>
    <p class="help" id="upload-status" aria-live="polite"></p>
  </form>
</div>
${preview
  ? html`<div class="card" id="preview">
  <h2>Preview of ${preview.name ?? 'the upload'}</h2>
  <p id="preview-counts">${preview.summary.rows} rows: ${countsLine(preview.summary.counts)}</p>
  ${columnsNote(preview.summary)}
  <form method="post" action="${base}/run">${tokenInput(viewer, FORM_NAME)}<input type="hidden" name="upload" value="${preview.fileId}">
    <button class="primary" type="submit" id="run-button" ${preview.summary.counts.create + preview.summary.counts.update === 0 ? html`disabled` : ''}>Run the import</button>
  </form>
  ${preview.summary.errors.length > 0 ? html`<h3>Rows that will be skipped</h3>${rowsTable('preview-errors', preview.summary.errors)}${preview.summary.errors_truncated ? html`<p class="help">Only the first ${preview.summary.errors.length} are listed.</p>` : ''}` : ''}
  <h3>First rows</h3>
  ${rowsTable('preview-rows', preview.summary.listed)}
  ${preview.summary.rows > preview.summary.listed.length ? html`<p class="help">The first ${preview.summary.listed.length} of ${preview.summary.rows} rows are shown.</p>` : ''}
</div>`
  : ''}
<div class="card">
  <h2>Export members</h2>
  <p class="help">Every member (staff accounts left out) in the same columns: the tier's display name in <code>tiers</code>, complimentary_plan true for a manual assignment, the card processor customer id.</p>
  <p><a class="button" id="export-link" href="/admin/members/export.csv" download>Download members CSV</a></p>
</div>
<script src="/static/admin-import.js" defer></script>`;
    return sendViewerPage(reply, viewer, 'Import and export members', body, opts.status ?? 200);
  }

  web.get(base, async (request, reply) => {
    const viewer = await guardPage(request, reply, services, 5);
    if (!viewer) return reply;
    const fileId = idParam((request.query as Record<string, unknown>).upload);
    if (fileId === null) return page(reply, viewer);
    const file = await findPurposeFile(db, MEMBER_IMPORT_PURPOSE, fileId, viewer.user.usr_user_id);
    if (!file) return page(reply, viewer, { error: 'There is no such upload of yours.', status: 404 });
    const stream = await openPurposeFile(services.driveStorage.blobs, file);
    try {
      const summary = await importMembers({ ...memberImportDeps(services, viewer.user), linker: null }, stream, { dryRun: true, listRows: PREVIEW_ROWS });
      return page(reply, viewer, { preview: { fileId, name: file.name, summary } });
    } catch (e) {
      const refusal = notCsvRefusal(e);
      if (!refusal) throw e;
      return page(reply, viewer, { error: `${file.name ?? 'The file'} is not a member CSV: ${(e as Error).message}`, status: 422 });
    } finally {
      stream.destroy();
    }
  });

  // The file's bytes as the request body (the page's script sends it), streamed to storage.
  web.register(async (scope) => {
    scope.addContentTypeParser('application/octet-stream', (_request, payload, done) => done(null, payload));
    scope.post(`${base}/upload`, async (request, reply) => {
      const viewer = await guardPage(request, reply, services, 5);
      if (!viewer) return reply;
      if (!checkFormToken(viewer.session, FORM_NAME, String(request.headers['x-form-token'] ?? ''))) return reply.code(403).send({ error: 'The form expired: reload the page.' });
      if (request.headers['content-type'] !== 'application/octet-stream') return reply.code(415).send({ error: 'Send the file as application/octet-stream' });
      const rawName = String(request.headers['x-file-name'] ?? 'members.csv');
      const name = decodeURIComponent(rawName).replace(/[\\/\0]/g, '_').slice(0, 255) || 'members.csv';
      try {
        const file = await storePurposeFile(db, services.driveStorage.blobs, {
          purpose: MEMBER_IMPORT_PURPOSE,
          ownerUserId: viewer.user.usr_user_id,
          name,
          mimeType: 'text/csv',
          body: request.body as Readable,
          maxBytes: services.settings.int('upload_member_import_max_bytes'),
          now: services.clock.now(),
        });
        return reply.send({ upload: file.fileId, preview_url: `${base}?upload=${file.fileId}` });
      } catch (e) {
        if (e instanceof PurposeFileTooLarge) return reply.code(413).send({ error: e.message });
        throw e;
      }
    });
  });

  web.post(`${base}/run`, async (request, reply) => {
    const viewer = await guardPage(request, reply, services, 5);
    if (!viewer) return reply;
    if (!(await checkPostedForm(request, reply, viewer, FORM_NAME))) return reply;
    const fileId = idParam(bodyField(request, 'upload'));
    const file = fileId === null ? undefined : await findPurposeFile(db, MEMBER_IMPORT_PURPOSE, fileId, viewer.user.usr_user_id);
    if (!file) return page(reply, viewer, { error: 'There is no such upload of yours.', status: 404 });
    const stream = await openPurposeFile(services.driveStorage.blobs, file);
    try {
      await checkMemberCsv(stream);
    } catch (e) {
      if (!notCsvRefusal(e)) throw e;
      return page(reply, viewer, { error: `${file.name ?? 'The file'} is not a member CSV: ${(e as Error).message}`, status: 422 });
    } finally {
      stream.destroy();
    }
    const jobId = await createImportJob(db, { fileId: file.fileId, userId: viewer.user.usr_user_id, bytesTotal: file.sizeBytes, dryRun: false, now: services.clock.now() });
    await runner.start(jobId);
    return reply.redirect(`${base}/jobs/${jobId}`, 303);
  });

  web.get(`${base}/jobs/:id`, async (request, reply) => {
    const viewer = await guardPage(request, reply, services, 5);
    if (!viewer) return reply;
    const jobId = idParam((request.params as { id: string }).id);
    const job = jobId === null ? null : await readImportJob(db, jobId);
    if (!job) return page(reply, viewer, { error: 'There is no such import.', status: 404 });
    const body = html`${adminNav()}
<p><a href="${base}">← Import and export members</a></p>
<div class="card">
  <h2>Progress</h2>
  ${progressBlock(job)}
  <div id="job-report">${job.report ? html`${columnsNote(job.report)}${job.report.errors.length > 0 ? html`<h3>Skipped rows</h3>${rowsTable('job-errors', job.report.errors)}` : html`<p>No row was skipped.</p>`}` : ''}</div>
  <p class="help" id="job-refresh"${job.status === 'done' || job.status === 'failed' ? html` hidden` : ''}><a href="${base}/jobs/${job.job_id}">Refresh</a> (this page follows the import by itself while scripts run).</p>
</div>
<script src="/static/admin-import.js" defer></script>`;
    return sendViewerPage(reply, viewer, `Member import ${job.job_id}`, body);
  });

  web.get(`${base}/jobs/:id/status`, async (request, reply) => {
    const viewer = await guardPage(request, reply, services, 5);
    if (!viewer) return reply;
    const jobId = idParam((request.params as { id: string }).id);
    const job = jobId === null ? null : await readImportJob(db, jobId);
    if (!job) return reply.code(404).send({ error: 'No such import' });
    const { user_id: _owner, report, ...view } = job;
    return reply.header('cache-control', 'no-store').send({ ...view, ended: job.status === 'done' || job.status === 'failed', has_report: report !== null });
  });

  web.get('/admin/members/export.csv', async (request, reply) => {
    const viewer = await guardPage(request, reply, services, 5);
    if (!viewer) return reply;
    reply.raw.writeHead(200, {
      ...Object.fromEntries(Object.entries(reply.getHeaders()).map(([k, v]) => [k, String(v)])),
      'content-type': 'text/csv; charset=utf-8',
      'content-disposition': `attachment; filename="members-${services.clock.now().toISOString().slice(0, 10)}.csv"`,
      'cache-control': 'no-store',
    });
    reply.hijack();
    await exportMembers(db, (text) =>
      reply.raw.write(text) ? undefined : new Promise<void>((resolve) => reply.raw.once('drain', () => resolve())),
    );
    reply.raw.end();
    return reply;
  });
}
