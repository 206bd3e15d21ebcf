import { defineAction } from '../define.js';
import { BROWSER_ONLY } from './shared.js';

/** Closes this session's window; sealed content reads as locked again. */
export default defineAction({
  name: 'vault_lock',
  description: 'Lock the vault for this session',
  auth: BROWSER_ONLY,
  mutates: false,
  input: {},
  async run({ db, web }) {
    await web.vault.close(db);
    return { data: { unlocked: false }, message: 'Vault locked.' };
  },
});
