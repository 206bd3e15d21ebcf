import { configDefaults, defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    // The cluster, crash and long fuzz runs start their own processes: `npm run test:cluster`.
    exclude: [...configDefaults.exclude, 'test/cluster/**'],
    globalSetup: ['test/helpers/global-setup.ts'],
    pool: 'forks',
    maxWorkers: 2,
    testTimeout: 30_000,
    // Suites that start the server process wait for a first start of the embedded database.
    hookTimeout: 180_000,
    reporters: ['default'],
  },
});
