// Types of scripts/settings-doc.mjs for the test that renders the page from src/.
import type { SettingDefinition } from '../src/settings/definitions.js';

export function renderSettingsDoc(core: readonly SettingDefinition[], plugins: ReadonlyArray<{ name: string; settings: readonly SettingDefinition[] }>): string;
export const SETTINGS_DOC: string;
