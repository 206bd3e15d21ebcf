import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    globalSetup: ['test/helpers/global-setup.ts'],
    pool: 'forks',
    maxWorkers: 2,
    testTimeout: 30_000,
    // Suites that start the server process wait for a first start of the embedded database.
    hookTimeout: 180_000,
    reporters: ['default'],
  },
});
