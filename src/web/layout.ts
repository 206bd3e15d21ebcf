import type { FastifyReply } from 'fastify';
import { html, raw, type SafeHtml } from './html.js';
import { httpsNotice } from './https-notice.js';
import type { WebSession } from '../accounts/web-sessions.js';

/** One link of the top bar. */
export interface NavLink {
  label: string;
  path: string;
  id?: string;
}

export interface PageViewer {
  session: WebSession | null;
  displayName: string | null;
  isStaff: boolean;
  /** The site's name (setting site_name), in the title and the header brand; 'Gatehouse' when not given. */
  siteName?: string;
  /** A signed-in member's own links in the top bar (Drive when usable, active plugins' pages, account pages). */
  memberLinks?: NavLink[];
  /** Set on staff pages whose request the API would refuse (plain HTTP while api_require_https is on). */
  apiRefusesHttp?: boolean;
}

// Emitted raw: a <style> element's text is not entity-decoded, so escaping would break selectors like a>b and quoted strings.
const STYLE = `
*{box-sizing:border-box}body{margin:0;font:16px/1.5 system-ui,-apple-system,Segoe UI,Roboto,sans-serif;color:#1b1f24;background:#f6f7f9}
header{background:#1f2a44;color:#fff;padding:.75rem 1rem;display:flex;flex-wrap:wrap;gap:.5rem 1rem;align-items:center;position:relative}
header a{color:#fff;text-decoration:none}header .brand{font-weight:700;margin-right:auto}header nav.site a:hover{text-decoration:underline}
header form{margin:0}header button{background:none;border:1px solid #fff;color:#fff;border-radius:4px;padding:.2rem .6rem;cursor:pointer;font:inherit}
header nav.site{display:flex;flex-wrap:wrap;gap:.5rem 1rem;align-items:center}
header details.menu>summary{list-style:none;cursor:pointer;border:1px solid #fff;border-radius:4px;padding:.2rem .7rem;user-select:none}header details.menu>summary::-webkit-details-marker{display:none}
header a:focus-visible,header button:focus-visible,header details.menu>summary:focus-visible{outline:2px solid #ffd166;outline-offset:2px}
@supports selector(::details-content){@media (min-width:601px){header details.menu>summary{display:none}header details.menu::details-content{content-visibility:visible;display:block}}}
@media (max-width:600px){header details.menu[open]>summary{background:rgba(255,255,255,.15)}
header details.menu nav.site{position:absolute;left:0;right:0;top:100%;z-index:20;background:#1f2a44;flex-direction:column;align-items:stretch;gap:0;padding:0 1rem .75rem;box-shadow:0 6px 12px rgba(0,0,0,.25)}
header nav.site>a,header nav.site>.who,header nav.site>form{padding:.55rem 0;border-top:1px solid rgba(255,255,255,.15)}header nav.site>.who{background:none;border-radius:0}header nav.site button{padding:.35rem .9rem}}
table.cart .num{text-align:right;white-space:nowrap}table.cart tfoot th{text-align:right}table.cart tfoot td,table.cart tfoot th{font-weight:700;border-bottom:0}
.size-input{display:flex;gap:.5rem}.size-input input{flex:1 1 auto;min-width:0}.size-input select{width:auto;flex:0 0 auto}
main{max-width:46rem;margin:1.5rem auto;padding:0 1rem}
.card{background:#fff;border:1px solid #dde1e6;border-radius:8px;padding:1.25rem;margin-bottom:1rem}
label{display:block;font-weight:600;margin:.75rem 0 .25rem}
input[type=text],input[type=email],input[type=password],input[type=number],input[type=url],select,textarea{width:100%;padding:.5rem;border:1px solid #b8c0cc;border-radius:4px;font:inherit}
button.primary{margin-top:1rem;background:#2454d6;color:#fff;border:0;border-radius:4px;padding:.6rem 1.2rem;font:inherit;cursor:pointer}
button.secondary{margin-top:1rem;background:#fff;color:#1b1f24;border:1px solid #b8c0cc;border-radius:4px;padding:.6rem 1.2rem;font:inherit;cursor:pointer}button.danger{color:#b3261e;border-color:#e3a5a0}button:disabled{opacity:.6;cursor:default}
.error{color:#b3261e}.help{color:#59636e;font-size:.9rem}.secret{font-family:monospace;word-break:break-all;background:#fff7e0;border:1px solid #f0d58c;padding:.5rem;border-radius:4px}button.link{background:none;border:0;color:#2454d6;cursor:pointer;padding:0;font:inherit}.inline{display:inline}nav.sub{display:flex;flex-wrap:wrap;gap:1rem;margin-bottom:1rem}.field-error{color:#b3261e;font-size:.9rem;margin-top:.2rem}.notice{background:#eef4ff;border:1px solid #c5d6ff;padding:.75rem;border-radius:6px}.notice.warning{background:#fff4e5;border-color:#f0b46c}
table{width:100%;border-collapse:collapse}th,td{text-align:left;padding:.4rem;border-bottom:1px solid #e5e8ec}
main.wide{max-width:72rem}header .who{font-weight:600;padding:.15rem .5rem;border-radius:4px;background:rgba(255,255,255,.12)}
.secret{display:block;overflow-wrap:anywhere;margin-top:.25rem}code.ident{font-family:monospace;background:#eef1f5;border-radius:3px;padding:0 .25rem}
td.actions{white-space:nowrap}td.actions form+form{margin-left:.75rem}td.time{white-space:nowrap}table.keys td.owner{overflow-wrap:anywhere}.card.narrow{max-width:44rem}details.features{border:1px solid #dde1e6;border-radius:6px;padding:.5rem .75rem;margin:.75rem 0}details.features summary{cursor:pointer;font-weight:600}
.card>h2:first-child{margin-top:0}.grid{margin-bottom:1rem;display:grid;grid-template-columns:repeat(auto-fit,minmax(15rem,1fr));gap:1rem}.grid>.card{margin:0}.figure{font-size:1.8rem;font-weight:700}
.plan{display:flex;flex-direction:column}.plan h2{margin:0}.plan .price{font-size:1.4rem;font-weight:700;margin:.25rem 0}.plan .per{font-size:1rem;font-weight:400;color:#59636e}.plan ul{padding-left:0;list-style:none}.plan li.no{color:#8a939e}.plan button.choose{margin-top:auto}
svg.chart{width:100%;height:auto;display:block}.chart-figure{margin:0}.legend{display:flex;flex-wrap:wrap;gap:1rem;font-size:.9rem;color:#59636e}.swatch{display:inline-block;width:.8rem;height:.8rem;border-radius:2px;margin-right:.3rem;vertical-align:-.05rem}
.banner{background:#fdecea;border:1px solid #f1b0aa;border-radius:6px;padding:.75rem;margin-bottom:1rem}pre.command{background:#1f2a44;color:#fff;padding:.5rem .75rem;border-radius:4px;margin:.5rem 0 0;white-space:pre-wrap;overflow-wrap:anywhere}
@media (max-width:600px){main{margin:1rem auto}th,td{font-size:.9rem}
svg.chart text{font-size:22px}table.stack thead{display:none}table.stack tr{display:block;border-bottom:1px solid #e5e8ec;padding:.4rem 0}table.stack td{display:block;border:0;padding:.1rem 0}table.stack td[data-label]::before{content:attr(data-label) ": ";font-weight:600}table.cart td.num{text-align:left}table.cart td.name{font-weight:600}table.cart tfoot tr{display:flex;justify-content:space-between;border:0}table.cart tfoot th,table.cart tfoot td{display:block;padding:.4rem 0}table.cart tfoot td[data-label]::before{content:none}td.actions{white-space:normal}}
`;

const DEFAULT_SITE_NAME = 'Gatehouse';

/**
 * The top bar's links in a <details> menu: on a phone (600 px and less) it is a "Menu" button that opens
 * them below the bar, without a script (the summary is a keyboard-operable toggle); wider, the links
 * stand in the bar and the button is hidden (browsers without ::details-content keep the button).
 */
function topBar(viewer: PageViewer, signedIn: boolean, formToken: string): SafeHtml {
  const link = (l: NavLink) => html`<a href="${l.path}"${l.id ? html` id="${l.id}"` : ''}>${l.label}</a>`;
  const links = signedIn
    ? html`${(viewer.memberLinks ?? []).map(link)}
    ${viewer.isStaff ? html`<a href="/admin" id="nav-dashboard">Dashboard</a>` : ''}
    <a class="who" id="header-user" href="/profile" title="Your profile (signed in as ${viewer.displayName})">${viewer.displayName}</a>
    <form method="post" action="/logout"><input type="hidden" name="form_token" value="${formToken}"><button type="submit">Sign out</button></form>`
    : html`<a href="/pricing" id="nav-pricing">Pricing</a><a href="/login" id="nav-sign-in">Sign in</a><a href="/register" id="nav-register">Register</a>`;
  return html`<details class="menu" id="site-menu">
  <summary id="menu-button" aria-label="Menu" aria-controls="site-nav"><span aria-hidden="true">☰</span> Menu</summary>
  <nav class="site" id="site-nav" aria-label="Site">
    ${links}
  </nav>
  </details>`;
}

/** The one page frame: navigation, the CSRF meta tag for signed-in pages, and the shared API client. */
export function page(viewer: PageViewer, title: string, body: SafeHtml, opts: { formToken?: string; wide?: boolean } = {}): SafeHtml {
  const signedIn = viewer.session?.userId != null;
  return html`<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${title} · ${viewer.siteName || DEFAULT_SITE_NAME}</title>
<link rel="icon" href="/favicon.svg" type="image/svg+xml">
${viewer.session ? html`<meta name="service-api-csrf" content="${viewer.session.csrfToken}">` : ''}
<link rel="alternate" type="application/rss+xml" href="/rss" title="RSS feed of posts">
<style>${raw(STYLE)}</style>
<script src="/static/serviceApi.js" defer></script>
<script src="/static/confirm.js" defer></script>
${signedIn ? html`<script src="/static/vault-beacon.js" defer></script>` : ''}
</head>
<body>
<header>
  <a class="brand" href="/" id="site-name">${viewer.siteName || DEFAULT_SITE_NAME}</a>
  ${topBar(viewer, signedIn, opts.formToken ?? '')}
</header>
<main${opts.wide ? html` class="wide"` : ''}>
${viewer.apiRefusesHttp ? httpsNotice() : ''}
<h1>${title}</h1>
${body}
</main>
</body>
</html>`;
}

export interface PageOptions {
  /** Origins besides our own that the page's forms may submit to, or be redirected to (a hosted checkout). */
  formActionOrigins?: string[];
  /** A wider main column, for pages built around a table or a grid (the admin dashboard, API keys, pricing). */
  wide?: boolean;
  /** Images from any https origin (post and page bodies, feature images); otherwise only this site's. */
  httpsImages?: boolean;
}

export function sendPage(reply: FastifyReply, markup: SafeHtml, status = 200, opts: PageOptions = {}): FastifyReply {
  const formAction = ["'self'", ...(opts.formActionOrigins ?? [])].join(' ');
  return reply
    .code(status)
    .type('text/html; charset=utf-8')
    .header('cache-control', 'no-store')
    .header('content-security-policy', `default-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:${opts.httpsImages ? ' https:' : ''}; frame-ancestors 'none'; form-action ${formAction}`)
    .send(markup.value);
}
