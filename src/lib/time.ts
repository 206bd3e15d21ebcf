/** The contract's timestamp format: 'YYYY-MM-DD HH:MM:SS' in UTC, no fraction, no zone. */
export function formatTimestamp(d: Date): string {
  const year = d.getUTCFullYear();
  // Four-digit years from the UTC fields (three times quicker than through toISOString: a page of rows
  // formats dozens); any other year through toISOString's own form.
  if (year < 1000 || year > 9999) return d.toISOString().slice(0, 19).replace('T', ' ');
  return `${year}-${pad2(d.getUTCMonth() + 1)}-${pad2(d.getUTCDate())} ${pad2(d.getUTCHours())}:${pad2(d.getUTCMinutes())}:${pad2(d.getUTCSeconds())}`;
}

const pad2 = (n: number): string => (n < 10 ? `0${n}` : `${n}`);

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
