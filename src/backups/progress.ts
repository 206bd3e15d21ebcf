/**
 * What a backup or a restore reports while it runs: a line worth reading ('note'), or how far it is
 * ('step': the share done, 0 to 1, and what it is doing). Plain data, so that the server can send it to
 * the CLI over its backup socket.
 */
export type BackupProgress = { kind: 'note'; text: string } | { kind: 'step'; fraction: number; label: string };

const BAR_WIDTH = 24;

export function progressBar(fraction: number, label: string): string {
  const f = Math.min(1, Math.max(0, fraction));
  const filled = Math.round(f * BAR_WIDTH);
  return `[${'#'.repeat(filled)}${'-'.repeat(BAR_WIDTH - filled)}] ${String(Math.floor(f * 100)).padStart(3)}% ${label}`;
}

/**
 * Draws progress on a terminal as one bar redrawn in place; elsewhere (a pipe, a log file) as a bar line
 * each time another tenth is done, so that a log is not flooded. Notes are lines of their own.
 */
export function progressPrinter(write: (text: string) => void, opts: { prefix: string; tty: boolean }): (p: BackupProgress) => void {
  let drawn = false;
  let lastTenth = -1;
  return (p) => {
    if (p.kind === 'note') {
      write(`${drawn ? '\n' : ''}${opts.prefix}: ${p.text}\n`);
      drawn = false;
      return;
    }
    const bar = `${opts.prefix} ${progressBar(p.fraction, p.label)}`;
    if (opts.tty) {
      write(`\r${bar}\x1b[K`);
      drawn = true;
      return;
    }
    const tenth = Math.floor(Math.min(1, Math.max(0, p.fraction)) * 10);
    if (tenth > lastTenth) {
      lastTenth = tenth;
      write(`${bar}\n`);
    }
  };
}
