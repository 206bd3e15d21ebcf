import { describe, expect, it } from 'vitest';
import { runCli } from '../../src/boot/cli.js';

/** The CLI in process, for input it must refuse before it opens any database. */
async function run(...argv: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  let stdout = '';
  let stderr = '';
  // A data directory that cannot be created: reaching for the database would fail with exit 1, not 2.
  const env = { DATA_DIR: '/dev/null/gatehouse' };
  const code = await runCli(argv, { stdout: (t) => (stdout += t), stderr: (t) => (stderr += t), env });
  return { code, stdout, stderr };
}

describe('CLI argument checking (exit 2, nothing on stdout)', () => {
  it.each([
    [['user', 'create', '--email', 'x@example.com'], /--password is required/],
    [['user', 'create', '--email', 'x@example.com', '--password', 'long enough', '--colour', 'red'], /colour/],
    [['user', 'create', '--email', 'x@example.com', '--password', 'long enough', '--permission', 'eleven'], /--permission must be an integer/],
    [['user', 'delete'], /usage: gatehouse user create/],
    [['key', 'create', '--permission', '4'], /--user-id is required/],
    [['key', 'create', '--user-id', '1', '--permission', '4', '--expires-time', '2030-01-01T00:00:00Z'], /YYYY-MM-DD HH:MM:SS/],
    [['key', 'create', '--user-id', '1', '--permission', '4', '--start-time', '2030-02-30 00:00:00'], /YYYY-MM-DD HH:MM:SS/],
    [['key', 'revoke'], /--api-key-id is required/],
    [['key'], /usage: gatehouse key create[\s\S]*gatehouse key revoke/],
    [['setting', 'get'], /usage: gatehouse setting get NAME/],
    [['setting', 'set', 'no_such_setting', '1'], /unknown setting no_such_setting/],
    [['setting', 'set', 'api_require_https', 'maybe'], /must be true or false/],
    [['setting', 'set', 'api_rate_limit_requests', '0'], /at least 1/],
    [['setting', 'set', 'subscription_downgrade_timing', 'tomorrow'], /one of immediate, end_of_period/],
    [['setting', 'set', 'api_min_client_versions', '{"ios":"soon"}'], /semver/],
    [['plugin', 'enable'], /usage: gatehouse plugin enable NAME/],
    [['task', 'run'], /usage: gatehouse task run NAME\|all/],
    [['migrate', 'now'], /usage: gatehouse migrate/],
    [['frobnicate'], /unknown command 'frobnicate'/],
    [[], /usage:/],
  ])('%j', async (argv, message) => {
    const r = await run(...(argv as string[]));
    expect(r.code, r.stderr).toBe(2);
    expect(r.stdout).toBe('');
    expect(r.stderr).toMatch(message as RegExp);
  });

  it('prints the usage of every command group for help, with exit 0', async () => {
    const r = await run('help');
    expect(r.code).toBe(0);
    for (const group of ['serve', 'migrate', 'user create', 'key create', 'key revoke', 'setting get', 'setting set', 'plugin list', 'task run']) {
      expect(r.stdout).toContain(`gatehouse ${group}`);
    }
  });
});
