import { hashSecret } from '../../accounts/passwords.js';
import { recordChange } from '../../drive/changes.js';
import { validationError } from '../../http/errors.js';
import { randomHex, sha256Hex } from '../../lib/crypto.js';
import { formatTimestamp, parseTimestamp } from '../../lib/time.js';
import { defineAction } from '../define.js';
import { driveRefusal, lockOwner, tierReader } from '../../drive/tree.js';

/** The path a share link is served at; the token is the link's only secret. */
export const shareLinkPath = (token: string) => `/s/${token}`;

/**
 * Makes a public link to a file of the caller's, when their tier has drive_share_links. The link's token
 * is in the answer once: only its SHA-256 is stored (and an optional password only as argon2id), so a lost
 * link cannot be shown again, only revoked and replaced.
 */
export default defineAction({
  name: 'drive_link_create',
  description: 'Create a public share link to a Drive file of yours, optionally expiring (expires_time, UTC) and with a password; the link is shown once',
  requires_setting: 'drive_active',
  mutates: true,
  // The link's token is shown once: an Idempotency-Key keeps a marker, never the answer.
  answer_holds_secret: true,
  input: {
    file_id: { type: 'int', required: true, min: 1 },
    expires_time: { type: 'datetime' },
    password: { type: 'password', min: 4, max_length: 256 },
  },
  drive_item: { need: 'owner', of: 'file' },
  async run({ input, user: me, db, clock, item, featureRegistry }) {
    if (item.inTrash) throw driveRefusal('not_found', 'That file is in the trash; restore it to share it');
    // A public link would hand sealed bytes to anyone holding it, without the owner's vault: sealing means
    // only the owner's unlocked session opens them.
    if (item.sealed) throw driveRefusal('sealed', 'Sealed files cannot be shared by public link: only your unlocked vault opens them', { sealed: true });
    const allowed = await tierReader(db, featureRegistry).getUserFeature(item.ownerUserId, 'drive_share_links', false);
    if (allowed !== true) throw driveRefusal('links_unavailable', 'Your plan does not include public share links');
    const now = clock.now();
    const expires = input.expires_time ? parseTimestamp(input.expires_time) : null;
    if (expires && expires.getTime() <= now.getTime()) throw validationError({ expires_time: 'must be in the future' });
    const passwordHash = input.password ? await hashSecret(input.password) : null;
    const token = randomHex(32);
    await lockOwner(db, item.ownerUserId);
    const row = await db
      .insertInto('fsl_file_share_links')
      .values({
        fsl_fil_file_id: item.id,
        fsl_usr_user_id: me.usr_user_id,
        fsl_token_hash: sha256Hex(token),
        fsl_password_hash: passwordHash,
        fsl_expires_time: expires,
        fsl_create_time: now,
        fsl_update_time: now,
      })
      .returning('fsl_file_share_link_id')
      .executeTakeFirstOrThrow();
    await recordChange(db, { ownerUserId: item.ownerUserId, fileId: item.id, kind: 'share', time: now });
    return {
      data: { link_id: row.fsl_file_share_link_id, url: shareLinkPath(token), expires_time: expires ? formatTimestamp(expires) : null },
      message: 'Link created. Copy it now: it is not shown again.',
    };
  },
});
