import { defineConfig } from 'vitest/config';

// `npm run test:cluster`: real server processes on one PostgreSQL, one Redis and one S3-compatible store
// (test/cluster). Each file starts what it needs; files run one at a time (the machine has 2 cores).
export default defineConfig({
  test: {
    include: ['test/cluster/**/*.test.ts'],
    pool: 'forks',
    maxWorkers: 1,
    fileParallelism: false,
    testTimeout: 120_000,
    hookTimeout: 180_000,
    reporters: ['default'],
  },
});
