import { readFileSync } from 'node:fs';
import path from 'node:path';
import type { FastifyInstance } from 'fastify';
import { PROJECT_ROOT } from '../../../lib/paths.js';
import type { Services } from '../../../services.js';
import { guardPage, sendViewerPage } from '../../../web/forms.js';
import { html } from '../../../web/html.js';

// The member's mailbox page (/mail): a shell rendered here, filled by /mail/app.js, which calls the
// mailbox/* actions through serviceApi (compose with attachments posts multipart with the same CSRF token).
// While the vault is locked the lists show the `(locked)` placeholders and a prompt to unlock on
// /profile/security.

const SCRIPT = readFileSync(path.join(PROJECT_ROOT, 'src', 'plugins', 'mailbox', 'web', 'mail.js'), 'utf8');

const STYLE = `
#mail{display:grid;grid-template-columns:12rem 1fr;gap:1rem;align-items:start}
#mail nav.folders{display:flex;flex-direction:column;gap:.25rem}
#mail nav.folders a{padding:.4rem .6rem;border-radius:4px;text-decoration:none;color:#1b1f24}
#mail nav.folders a[aria-current=page]{background:#e8eefc;font-weight:700}
#mail nav.folders .compose{background:#2454d6;color:#fff;text-align:center;margin-bottom:.5rem}
#mail .address{font-size:.85rem;color:#59636e;overflow-wrap:anywhere;margin:.5rem 0}
#mail .locked-banner{border-left:4px solid #b3261e;background:#fdf1f0}
#mail ul.threads{list-style:none;padding:0;margin:0}
#mail ul.threads li{display:grid;grid-template-columns:1.6rem minmax(8rem,14rem) 1fr auto;gap:.5rem;align-items:baseline;padding:.55rem .4rem;border-bottom:1px solid #e5e8ec;cursor:pointer}
#mail ul.threads li:hover{background:#f5f7fa}
#mail ul.threads li.unread .who,#mail ul.threads li.unread .subject{font-weight:700}
#mail ul.threads .who,#mail ul.threads .line{overflow:hidden;text-overflow:ellipsis;white-space:nowrap}
#mail ul.threads .snippet{color:#59636e}
#mail ul.threads .meta{color:#59636e;font-size:.85rem;white-space:nowrap}
#mail .star{background:none;border:0;padding:0;margin:0;font-size:1.1rem;color:#b8c0cc;cursor:pointer}
#mail .star.on{color:#d89b00}
#mail .label{display:inline-block;background:#eef1f4;border-radius:3px;padding:0 .35rem;font-size:.8rem;margin-right:.25rem}
#mail .message{border-bottom:1px solid #e5e8ec;padding:.75rem 0}
#mail .message .head{display:flex;flex-wrap:wrap;justify-content:space-between;gap:.25rem;color:#59636e;font-size:.9rem}
#mail .message .head strong{color:#1b1f24}
#mail .message pre{white-space:pre-wrap;overflow-wrap:anywhere;font:inherit;margin:.5rem 0 0}
#mail .actions{display:flex;flex-wrap:wrap;gap:.5rem;margin-bottom:.75rem}
#mail .actions button{margin-top:0}
#mail .timeline{font-size:.85rem;color:#59636e;margin:.5rem 0 0;padding-left:1rem}
#mail form.compose label{display:block;margin-top:.5rem}
#mail form.compose textarea{width:100%;min-height:10rem}
@media (max-width:700px){#mail{grid-template-columns:1fr}#mail nav.folders{flex-direction:row;flex-wrap:wrap}#mail nav.folders .compose{margin-bottom:0}
#mail ul.threads li{grid-template-columns:1.6rem 1fr}#mail ul.threads .line,#mail ul.threads .meta{grid-column:2}}
`;

export async function mailPages(web: FastifyInstance, services: Services): Promise<void> {
  web.get('/mail/app.js', async (_request, reply) => reply.type('application/javascript; charset=utf-8').header('cache-control', 'public, max-age=300').send(SCRIPT));
  web.get('/mail', async (request, reply) => {
    const viewer = await guardPage(request, reply, services, 0);
    if (!viewer) return reply;
    const body = html`<style>${STYLE}</style>
<div id="mail">
<aside>
<nav class="folders" aria-label="Folders">
<a href="#compose" class="compose" id="compose-link">Compose</a>
<a href="#folder=inbox" data-folder="inbox">Inbox</a>
<a href="#folder=starred" data-folder="starred">Starred</a>
<a href="#folder=sent" data-folder="sent">Sent</a>
<a href="#folder=archive" data-folder="archive">Archive</a>
<a href="#folder=trash" data-folder="trash">Trash</a>
</nav>
<p class="address" id="mail-address"></p>
</aside>
<section>
<div class="card locked-banner" id="locked-banner" hidden><p><strong>Your vault is locked.</strong> Senders, subjects and message text of this mailbox stay hidden until you unlock it; you can still sort, star, label and delete.</p><p><a href="/profile/security" id="unlock-link">Unlock your vault</a></p></div>
<div class="card" id="mail-view"><p class="help">Loading your mailbox…</p></div>
<p id="mail-result" class="error" role="alert"></p>
</section>
</div>
<script src="/mail/app.js" defer></script>`;
    return sendViewerPage(reply, viewer, 'Mail', body, 200, { wide: true });
  });
}
