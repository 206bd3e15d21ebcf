/** Channels a member may agree to be contacted through, stored comma-separated in usr_contact_preferences. */
export const CONTACT_CHANNELS = ['email', 'sms', 'phone', 'post'] as const;
export type ContactChannel = (typeof CONTACT_CHANNELS)[number];

export const CONTACT_CHANNEL_LABELS: Record<ContactChannel, string> = {
  email: 'Email',
  sms: 'Text message',
  phone: 'Phone call',
  post: 'Post',
};

export function parseContactPreferences(stored: string | null): ContactChannel[] {
  if (!stored) return [];
  return stored.split(',').filter((c): c is ContactChannel => (CONTACT_CHANNELS as readonly string[]).includes(c));
}
