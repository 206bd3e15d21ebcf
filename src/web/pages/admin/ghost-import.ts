import { formatBytes } from '../../../lib/byte-size.js';
import multipart from '@fastify/multipart';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { checkFormToken } from '../../../accounts/web-sessions.js';
import type { Services } from '../../../services.js';
import { GHOST_EXPORT_MAX_BYTES, GhostExportError, parseGhostExport } from '../../../store/ghost/format.js';
import { importGhostContent, type GhostImportReport } from '../../../store/ghost/import.js';
import { guardPage, sendViewerPage, tokenInput, type Viewer } from '../../forms.js';
import { html } from '../../html.js';
import { adminNav } from './nav.js';

/** Importing a site rewrites tiers and content: superadmins only. */
const SUPERADMIN = 10;
const FORM_NAME = 'ghost-import';
const PATH = '/admin/import/ghost';
const LIMIT = formatBytes(GHOST_EXPORT_MAX_BYTES);

function uploadForm(viewer: Viewer) {
  return html`<div class="card" id="ghost-upload">
  <p class="help">In Ghost Admin, export your content (Settings → Advanced → Import/Export → Export content) and upload the JSON file here (at most ${LIMIT}).
  Tiers, posts and pages come over with their gates; importing the same file again changes nothing. Members come over separately, from Ghost's member CSV.
  The operator guide’s “Moving from Ghost” says what is and is not carried over.</p>
  <form method="post" action="${PATH}" enctype="multipart/form-data">${tokenInput(viewer, FORM_NAME)}
    <p><label for="ghost-export">Ghost export (.json)</label><br><input id="ghost-export" name="export" type="file" accept=".json,application/json" required></p>
    <button class="primary" type="submit">Import</button>
  </form>
</div>`;
}

function reportView(report: GhostImportReport) {
  const kinds = [
    ['tier', 'Tiers'],
    ['post', 'Posts'],
    ['page', 'Pages'],
  ] as const;
  return html`<div class="card" id="ghost-report">
  <h2>Imported from Ghost ${report.ghost_version}</h2>
  <table class="stack" id="ghost-counts"><thead><tr><th>Kind</th><th>Created</th><th>Updated</th><th>Unchanged</th><th>Skipped</th></tr></thead><tbody>
  ${kinds.map(([k, label]) => {
    const c = report.counts[k];
    return html`<tr data-kind="${k}"><td>${label}</td><td data-label="Created">${String(c.created)}</td><td data-label="Updated">${String(c.updated)}</td><td data-label="Unchanged">${String(c.unchanged)}</td><td data-label="Skipped">${String(c.skipped)}</td></tr>`;
  })}
  </tbody></table>
  ${report.widened.length > 0
    ? html`<h3>Tier sets widened</h3><p class="help">A gate here is one lowest tier level, so these are also readable by the tiers named last.</p><ul id="ghost-widened">${report.widened.map((w) => html`<li><strong>${w.slug}</strong> (${w.kind}): for ${w.tiers.join(', ')}; gated at level ${String(w.level)}, so also ${w.also_readable_by.join(', ')}</li>`)}</ul>`
    : ''}
  ${report.not_imported.length > 0
    ? html`<h3>Not imported</h3><ul id="ghost-not-imported">${report.not_imported.map((n) => html`<li><strong>${n.name}</strong> (${n.kind}): ${n.reason}</li>`)}</ul>`
    : ''}
  ${report.notes.length > 0 ? html`<h3>Notes</h3><ul id="ghost-notes">${report.notes.map((n) => html`<li>${n}</li>`)}</ul>` : ''}
</div>`;
}

/** The form token and the uploaded file of the multipart post; a file over the limit comes back truncated. */
async function readUpload(request: FastifyRequest): Promise<{ token: string; file: Buffer | null; truncated: boolean }> {
  let token = '';
  let file: Buffer | null = null;
  let truncated = false;
  for await (const part of request.parts()) {
    if (part.type === 'field') {
      if (part.fieldname === 'form_token' && typeof part.value === 'string') token = part.value;
    } else if (part.fieldname === 'export' && file === null) {
      const chunks: Buffer[] = [];
      for await (const chunk of part.file) chunks.push(chunk as Buffer);
      truncated = part.file.truncated;
      file = Buffer.concat(chunks);
    } else {
      part.file.resume();
    }
  }
  return { token, file, truncated };
}

/** /admin/import/ghost: upload a Ghost content export and read the import's report (DESIGN 16). */
export async function ghostImportAdminPages(web: FastifyInstance, services: Services): Promise<void> {
  const show = (reply: FastifyReply, viewer: Viewer, extra: ReturnType<typeof html> | string, status = 200) =>
    sendViewerPage(reply, viewer, 'Import from Ghost', html`${adminNav()}${extra}${uploadForm(viewer)}`, status, { wide: true });

  web.get(PATH, async (request, reply) => {
    const viewer = await guardPage(request, reply, services, SUPERADMIN);
    if (!viewer) return reply;
    return show(reply, viewer, '');
  });

  await web.register(async (scope) => {
    await scope.register(multipart, { throwFileSizeLimit: false, limits: { fileSize: GHOST_EXPORT_MAX_BYTES, files: 1, fields: 4, parts: 5 } });
    scope.post(PATH, async (request, reply) => {
      const viewer = await guardPage(request, reply, services, SUPERADMIN);
      if (!viewer) return reply;
      if (!request.isMultipart()) return show(reply, viewer, html`<p class="error" role="alert" id="import-error">Choose the export file to upload.</p>`, 400);
      const upload = await readUpload(request);
      if (!checkFormToken(viewer.session, FORM_NAME, upload.token)) {
        return sendViewerPage(reply, viewer, 'Form expired', html`<div class="card"><p class="error">The form expired. Go back, reload and try again.</p></div>`, 403);
      }
      if (upload.truncated) return show(reply, viewer, html`<p class="error" role="alert" id="import-error">The file is over ${LIMIT}: not a Ghost content export.</p>`, 413);
      if (!upload.file || upload.file.length === 0) return show(reply, viewer, html`<p class="error" role="alert" id="import-error">Choose the export file to upload.</p>`, 400);
      let parsed;
      try {
        parsed = parseGhostExport(upload.file.toString('utf8'));
      } catch (e) {
        if (e instanceof GhostExportError) return show(reply, viewer, html`<p class="error" role="alert" id="import-error">${e.message}</p>`, 400);
        throw e;
      }
      const report = await importGhostContent({ db: services.db, clock: services.clock, registry: services.tiers.registry, fallbackAuthorId: viewer.user.usr_user_id }, parsed.meta, parsed.data);
      return show(reply, viewer, reportView(report));
    });
  });
}
