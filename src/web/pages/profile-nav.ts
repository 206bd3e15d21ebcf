import { html } from '../html.js';

const PAGES: Array<[path: string, label: string]> = [
  ['/profile', 'Profile'],
  ['/profile/security', 'Password and passkeys'],
  ['/profile/subscription', 'Subscription'],
  ['/profile/app-sessions', 'App sessions'],
];

/** The member's own pages, shown at the top of each (the current one marked for screen readers). */
export function profileNav(current: string) {
  return html`<nav class="sub" aria-label="Your account">${PAGES.map(([path, label]) =>
    path === current ? html`<a href="${path}" aria-current="page"><strong>${label}</strong></a>` : html`<a href="${path}">${label}</a>`,
  )}</nav>`;
}
