/** The contract's timestamp format: 'YYYY-MM-DD HH:MM:SS' in UTC, no fraction, no zone. */
export function formatTimestamp(d: Date): string {
  return d.toISOString().slice(0, 19).replace('T', ' ');
}

const TIMESTAMP_RE = /^(\d{4})-(\d{2})-(\d{2}) (\d{2}):(\d{2}):(\d{2})$/;

/** Parses the contract format strictly; returns null for anything else (including impossible dates). */
export function parseTimestamp(s: string): Date | null {
  const m = TIMESTAMP_RE.exec(s);
  if (!m) return null;
  const d = new Date(`${m[1]}-${m[2]}-${m[3]}T${m[4]}:${m[5]}:${m[6]}Z`);
  if (Number.isNaN(d.getTime()) || formatTimestamp(d) !== s) return null;
  return d;
}

export function addSeconds(d: Date, s: number): Date {
  return new Date(d.getTime() + s * 1000);
}
