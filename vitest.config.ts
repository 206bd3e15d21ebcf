import { configDefaults, defineConfig } from 'vitest/config';

/**
 * Files that run in a process of their own: one sets process-wide state before anything loads it (the
 * plugin code folder); the browser files spend their time in Chromium, not in loading modules, and keep
 * the isolation they were written with. Every other file shares its worker's loaded modules with the
 * files before it (isolate: false), which saves loading the app's modules again for each of ~160 files:
 * on 2 CPUs, import time went from 407 s to 35 s of a run. Registries filled at run time (plugin
 * models, actions, settings) are the same in every file, since every file loads the same plugin folder.
 */
const OWN_PROCESS = ['test/api/plugin-modules.test.ts', 'test/browser/**/*.test.ts'];

export default defineConfig({
  test: {
    globalSetup: ['test/helpers/global-setup.ts'],
    pool: 'forks',
    maxWorkers: 2,
    testTimeout: 30_000,
    // Suites that start the server process wait for a first start of the embedded database.
    hookTimeout: 180_000,
    reporters: ['default'],
    // The cluster, crash and long fuzz runs (test/cluster) start their own processes: `npm run test:cluster`.
    projects: [
      { extends: true, test: { name: 'shared', include: ['test/**/*.test.ts'], exclude: [...configDefaults.exclude, 'test/cluster/**', ...OWN_PROCESS], isolate: false } },
      { extends: true, test: { name: 'own-process', include: OWN_PROCESS } },
    ],
  },
});
