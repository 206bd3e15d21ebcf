/**
 * The curl examples of a Markdown document, read back as requests, with the answers the document shows
 * under each (`# HTTP/1.1 200 OK`, `# header: value`, and a JSON line in which `...` stands for what is
 * left out). Tests replay them through the app, so an example that stops working fails a test.
 */
export interface DocExample {
  method: string;
  /** The path and query of the URL (the documented host is not used). */
  url: string;
  headers: Record<string, string>;
  body: string | undefined;
  expected: { status: number | null; headers: Record<string, string>; jsonParts: string[] };
}

/** The text under a heading, up to the next heading of the same or a higher level (lines in code fences are not headings). */
export function sectionOf(markdown: string, heading: string): string {
  const lines = markdown.split('\n');
  let fenced = false;
  const levels = lines.map((l) => {
    if (/^(```|~~~)/.test(l)) fenced = !fenced;
    const m = !fenced && /^(#{1,6})\s+(.*)$/.exec(l);
    return m ? { level: m[1]!.length, text: m[2]!.trim() } : null;
  });
  const start = levels.findIndex((h) => h?.text === heading);
  if (start < 0) throw new Error(`no heading '${heading}'`);
  const level = levels[start]!.level;
  const end = levels.findIndex((h, i) => i > start && h !== null && h.level <= level);
  return lines.slice(start + 1, end < 0 ? undefined : end).join('\n');
}

/** Shell words of one command line: single and double quotes, `$NAME` expanded from vars inside double quotes and bare. */
function words(command: string, vars: Record<string, string>): string[] {
  const out: string[] = [];
  let cur = '';
  let inWord = false;
  const expand = (s: string) => s.replace(/\$\{?([A-Z_][A-Z0-9_]*)\}?/g, (_, name: string) => {
    if (!(name in vars)) throw new Error(`the example uses $${name}, which the test does not provide`);
    return vars[name]!;
  });
  for (let i = 0; i < command.length; i++) {
    const c = command[i]!;
    if (c === "'") {
      const j = command.indexOf("'", i + 1);
      cur += command.slice(i + 1, j);
      i = j;
      inWord = true;
    } else if (c === '"') {
      const j = command.indexOf('"', i + 1);
      cur += expand(command.slice(i + 1, j));
      i = j;
      inWord = true;
    } else if (/\s/.test(c)) {
      if (inWord) out.push(cur);
      cur = '';
      inWord = false;
    } else if (c === '$') {
      const m = /^\$\{?([A-Z_][A-Z0-9_]*)\}?/.exec(command.slice(i))!;
      cur += expand(m[0]);
      i += m[0].length - 1;
      inWord = true;
    } else {
      cur += c;
      inWord = true;
    }
  }
  if (inWord) out.push(cur);
  return out;
}

/** Every `curl` command of the fenced `sh` blocks in the text, in order, with the answer comments after it. */
export function curlExamples(markdown: string, vars: Record<string, string> = {}): DocExample[] {
  const examples: DocExample[] = [];
  for (const block of markdown.matchAll(/^```sh\n([\s\S]*?)^```/gm)) {
    const lines = block[1]!.replace(/\\\n\s*/g, ' ').split('\n');
    for (let i = 0; i < lines.length; i++) {
      const line = lines[i]!.trim();
      if (!line.startsWith('curl ')) continue;
      const w = words(line, vars);
      let method = 'GET';
      let url = '';
      const headers: Record<string, string> = {};
      let body: string | undefined;
      for (let k = 1; k < w.length; k++) {
        const a = w[k]!;
        if (a === '-H') {
          const h = w[++k]!;
          const colon = h.indexOf(':');
          headers[h.slice(0, colon).trim().toLowerCase()] = h.slice(colon + 1).trim();
        } else if (a === '-d' || a === '--data') {
          body = w[++k]!;
          if (method === 'GET') method = 'POST';
        } else if (a === '-X') method = w[++k]!;
        else if (/^https?:\/\//.test(a)) url = a.replace(/^https?:\/\/[^/]+/, '');
      }
      const expected: DocExample['expected'] = { status: null, headers: {}, jsonParts: [] };
      for (let j = i + 1; j < lines.length && lines[j]!.startsWith('# '); j++) {
        const note = lines[j]!.slice(2).trim();
        const status = /^HTTP\/1\.1 (\d{3})/.exec(note);
        if (status) expected.status = Number(status[1]);
        else if (note.startsWith('{')) expected.jsonParts = note.split('...').filter((p) => p !== '');
        else if (/^[a-z-]+: /i.test(note)) {
          const colon = note.indexOf(':');
          expected.headers[note.slice(0, colon).toLowerCase()] = note.slice(colon + 1).trim();
        }
      }
      // curl's -d sends a form body unless the example names another type.
      if (body !== undefined && !('content-type' in headers)) headers['content-type'] = 'application/x-www-form-urlencoded';
      examples.push({ method, url, headers, body, expected });
    }
  }
  return examples;
}
