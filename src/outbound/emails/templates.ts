/** The member emails (DESIGN 15), each switchable and editable on /admin/emails. */
export const MEMBER_EMAIL_KEYS = [
  'welcome',
  'payment_failed',
  'access_paused',
  'renewal_reminder',
  'cancellation_scheduled',
  'reactivated',
  'expired',
  'refunded',
  'tier_changed',
] as const;

export type MemberEmailKey = (typeof MEMBER_EMAIL_KEYS)[number];

export function isMemberEmailKey(key: string): key is MemberEmailKey {
  return (MEMBER_EMAIL_KEYS as readonly string[]).includes(key);
}

/**
 * Which email an event sends its member. A tier change mails on `subscription.changed` only (upgrade,
 * downgrade, product change): the `tier.granted` an upgrade also writes would mail the same news twice, and
 * a grant by purchase or by hand is not a change the member asked to be told about by this mail.
 * The renewal reminder has no event: a scheduled task writes it (renewal-reminder-task.ts).
 */
export const EMAIL_FOR_EVENT: Readonly<Record<string, MemberEmailKey>> = {
  'member.created': 'welcome',
  'subscription.billing_issue': 'payment_failed',
  'subscription.on_hold': 'access_paused',
  'subscription.cancel_scheduled': 'cancellation_scheduled',
  'subscription.reactivated': 'reactivated',
  'subscription.expired': 'expired',
  'subscription.refunded': 'refunded',
  'subscription.changed': 'tier_changed',
};

/** The values a template may use as `{{name}}`. */
export const PLACEHOLDERS = {
  site_name: 'The site name (setting site_name)',
  site_url: 'The site address (BASE_URL)',
  subscription_url: 'The member’s subscription page, where a payment method is fixed and a subscription changed',
  first_name: 'The member’s first name',
  last_name: 'The member’s last name',
  email: 'The member’s email address',
  product_name: 'The subscription’s product',
  tier_name: 'The tier the subscription gives',
  period_end: 'The end of the paid period (the renewal date)',
} as const;

export type PlaceholderValues = Record<keyof typeof PLACEHOLDERS, string>;

export interface MemberEmailTemplate {
  key: MemberEmailKey;
  /** What the email is for, shown on /admin/emails. */
  title: string;
  /** When it is sent. */
  trigger: string;
  subject: string;
  /** Plain text with `{{placeholders}}`; the HTML part is made from it (paragraphs, links). */
  body: string;
  active: boolean;
}

const sign = '\n\n— {{site_name}}\n';

export const DEFAULT_TEMPLATES: Record<MemberEmailKey, MemberEmailTemplate> = {
  welcome: {
    key: 'welcome',
    title: 'Welcome',
    trigger: 'A member is created (member.created), while the setting email_welcome_active is on',
    subject: 'Welcome to {{site_name}}',
    body: 'Hello {{first_name}},\n\nwelcome to {{site_name}}. Your account is ready: sign in with {{email}} at\n{{site_url}}/login' + sign,
    active: true,
  },
  payment_failed: {
    key: 'payment_failed',
    title: 'Payment failed',
    trigger: 'A renewal payment failed (subscription.billing_issue)',
    subject: 'Your payment for {{site_name}} did not go through',
    body:
      'Hello {{first_name}},\n\nthe latest payment for your {{product_name}} subscription did not go through. ' +
      'Your access continues for now while the payment is retried.\n\nTo keep your membership, update your payment method here:\n{{subscription_url}}' +
      sign,
    active: true,
  },
  access_paused: {
    key: 'access_paused',
    title: 'Access paused',
    trigger: 'The grace period after a failed payment ran out (subscription.on_hold)',
    subject: 'Your {{site_name}} access is paused',
    body:
      'Hello {{first_name}},\n\nwe could not collect the payment for your {{product_name}} subscription, so your access is paused until it is settled.' +
      '\n\nUpdate your payment method to restore it:\n{{subscription_url}}' +
      sign,
    active: true,
  },
  renewal_reminder: {
    key: 'renewal_reminder',
    title: 'Renewal reminder',
    trigger: 'An auto-renewing subscription renews within renewal_reminder_days (once per period)',
    subject: 'Your {{product_name}} subscription renews on {{period_end}}',
    body:
      'Hello {{first_name}},\n\na reminder: your {{product_name}} subscription at {{site_name}} renews on {{period_end}}. ' +
      'There is nothing to do if you want to keep it.\n\nTo change or cancel it before then:\n{{subscription_url}}' +
      sign,
    active: true,
  },
  cancellation_scheduled: {
    key: 'cancellation_scheduled',
    title: 'Cancellation scheduled',
    trigger: 'A subscription was cancelled to end with its period (subscription.cancel_scheduled)',
    subject: 'Your {{site_name}} subscription is cancelled',
    body:
      'Hello {{first_name}},\n\nyour {{product_name}} subscription has been cancelled and will not renew. You keep your access until {{period_end}}.' +
      '\n\nChanged your mind? You can reactivate it before then:\n{{subscription_url}}' +
      sign,
    active: true,
  },
  reactivated: {
    key: 'reactivated',
    title: 'Reactivated',
    trigger: 'A cancelled subscription was reactivated (subscription.reactivated)',
    subject: 'Your {{site_name}} subscription is active again',
    body: 'Hello {{first_name}},\n\nyour {{product_name}} subscription is active again and renews as usual.\n\n{{subscription_url}}' + sign,
    active: true,
  },
  expired: {
    key: 'expired',
    title: 'Expired',
    trigger: 'A subscription ended (subscription.expired)',
    subject: 'Your {{site_name}} subscription has ended',
    body: 'Hello {{first_name}},\n\nyour {{product_name}} subscription has ended.\n\nYou can subscribe again at any time:\n{{site_url}}/pricing' + sign,
    active: true,
  },
  refunded: {
    key: 'refunded',
    title: 'Refunded',
    trigger: 'A subscription payment was refunded (subscription.refunded)',
    subject: 'Your {{site_name}} payment was refunded',
    body: 'Hello {{first_name}},\n\nyour payment for {{product_name}} has been refunded.\n\n{{subscription_url}}' + sign,
    active: true,
  },
  tier_changed: {
    key: 'tier_changed',
    title: 'Tier changed',
    trigger: 'A subscription was upgraded, downgraded or changed product (subscription.changed)',
    subject: 'Your {{site_name}} membership changed',
    body: 'Hello {{first_name}},\n\nyour subscription is now {{product_name}}, with {{tier_name}} access.\n\n{{subscription_url}}' + sign,
    active: true,
  },
};

/** What the preview and the test send fill the placeholders with. */
export function sampleValues(site: { siteName: string; baseUrl: string }, me: { firstName: string; lastName: string; email: string }): PlaceholderValues {
  return {
    site_name: site.siteName,
    site_url: site.baseUrl,
    subscription_url: `${site.baseUrl}/profile/subscription`,
    first_name: me.firstName,
    last_name: me.lastName,
    email: me.email,
    product_name: 'Gold monthly',
    tier_name: 'Gold',
    period_end: '2026-12-31',
  };
}

const PLACEHOLDER = /\{\{\s*([a-z_]+)\s*\}\}/g;

/** Names used as `{{name}}` that are not placeholders (refused when a template is saved). */
export function unknownPlaceholders(text: string): string[] {
  const names = [...text.matchAll(PLACEHOLDER)].map((m) => m[1]!);
  return [...new Set(names.filter((n) => !Object.prototype.hasOwnProperty.call(PLACEHOLDERS, n)))];
}

function fill(text: string, values: PlaceholderValues, encode: (s: string) => string): string {
  return text.replace(PLACEHOLDER, (whole, name: string) =>
    Object.prototype.hasOwnProperty.call(values, name) ? encode(values[name as keyof PlaceholderValues]) : whole,
  );
}

const ESCAPES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };
export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => ESCAPES[c]!);
}

/** Escaped text to paragraphs, line breaks and clickable http(s) links. */
function paragraphs(escaped: string): string {
  const linked = escaped.replace(/https?:\/\/[^\s<>"']+/g, (url) => `<a href="${url}" style="color:#2454d6;overflow-wrap:anywhere;word-break:break-all">${url}</a>`);
  return linked
    .split(/\n{2,}/)
    .map((p) => p.trim())
    .filter((p) => p !== '')
    .map((p) => `<p style="margin:0 0 16px">${p.replace(/\n/g, '<br>')}</p>`)
    .join('\n');
}

/** The HTML part's content (what the preview shows): the site name above the body. */
export function htmlContent(siteName: string, bodyText: string, values: PlaceholderValues): string {
  // The template is escaped first, then each value escaped as it is filled in: neither can inject markup.
  const body = paragraphs(fill(escapeHtml(bodyText), values, escapeHtml));
  return (
    `<div style="max-width:560px;margin:0 auto;background:#ffffff;border:1px solid #dde1e6;border-radius:8px;padding:24px;font:16px/1.5 system-ui,-apple-system,Segoe UI,Roboto,sans-serif;color:#1b1f24">` +
    `<div style="font-size:18px;font-weight:700;margin:0 0 20px">${escapeHtml(siteName)}</div>\n${body}\n</div>`
  );
}

export interface RenderedEmail {
  subject: string;
  text: string;
  html: string;
}

/** A template with its placeholders filled in: a one-line subject, the plain text and a simple HTML page. */
export function renderEmail(template: Pick<MemberEmailTemplate, 'subject' | 'body'>, values: PlaceholderValues): RenderedEmail {
  const subject = fill(template.subject, values, (s) => s).replace(/[\r\n]+/g, ' ').trim().slice(0, 255);
  const text = fill(template.body, values, (s) => s);
  const content = htmlContent(values.site_name, template.body, values);
  const html =
    `<!doctype html>\n<html><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1"><title>${escapeHtml(subject)}</title></head>` +
    `<body style="margin:0;padding:24px 12px;background:#f6f7f9">\n${content}\n</body></html>\n`;
  return { subject, text, html };
}
