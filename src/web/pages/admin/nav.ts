import { html } from '../../html.js';

export const adminNav = () =>
  html`<nav class="sub" aria-label="Admin"><a href="/admin">Dashboard</a><a href="/admin/posts">Posts</a><a href="/admin/pages">Pages</a><a href="/admin/members">Members</a><a href="/admin/orders">Orders</a><a href="/admin/tiers">Tiers</a><a href="/admin/products">Products</a><a href="/admin/members/import">Import</a><a href="/admin/import/ghost">Import from Ghost</a><a href="/admin/settings">Settings</a><a href="/admin/api-keys">API keys</a><a href="/admin/webhooks">Webhooks</a><a href="/admin/emails">Emails</a><a href="/admin/outbox">Outbox</a></nav>`;
