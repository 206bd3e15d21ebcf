import path from 'node:path';
import { fileURLToPath } from 'node:url';

/** The project root: package.json, plugins/ and includes/ live beside src/ and dist/. */
export const PROJECT_ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
/** Where each plugin's manifest (plugin.json) and tier features live. */
export const PLUGINS_DIR = path.join(PROJECT_ROOT, 'plugins');
/** Where each plugin's code lives (src/plugins, or dist/plugins once built): a folder with an index module. */
export const PLUGIN_CODE_DIR = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', 'plugins');
