/**
 * A strict well-formedness check of an XML 1.0 document (what a feed reader's parser demands): an
 * optional declaration, one root element, balanced and properly nested tags, quoted attributes, only
 * the predefined or numeric entities, and no characters XML forbids. Returns the problems found.
 */
export function xmlProblems(doc: string): string[] {
  const problems: string[] = [];
  const NAME = /^[A-Za-z_][\w.-]*(:[A-Za-z_][\w.-]*)?$/;
  const ENTITY = /&(?!(?:amp|lt|gt|quot|apos|#\d+|#x[0-9a-fA-F]+);)/;
  // eslint-disable-next-line no-control-regex
  const FORBIDDEN = /[^\t\n\r\x20-\uD7FF\uE000-\uFFFD\u{10000}-\u{10FFFF}]/u;
  let rest = doc;
  const decl = /^<\?xml\s+version="1\.0"(\s+encoding="[A-Za-z0-9._-]+")?\s*\?>/.exec(rest);
  if (decl) rest = rest.slice(decl[0].length);
  if (FORBIDDEN.test(doc)) problems.push('a character XML forbids');
  const stack: string[] = [];
  let roots = 0;
  for (const token of rest.split(/(<[^>]*>)/)) {
    if (token === '') continue;
    if (!token.startsWith('<')) {
      if (ENTITY.test(token)) problems.push(`a bare & in text: ${token.slice(0, 40)}`);
      if (stack.length === 0 && token.trim() !== '') problems.push(`text outside the root element: ${token.slice(0, 40)}`);
      continue;
    }
    if (token.includes('<', 1)) problems.push(`a < inside a tag: ${token.slice(0, 40)}`);
    const close = /^<\/([^\s>]+)\s*>$/.exec(token);
    if (close) {
      const open = stack.pop();
      if (open !== close[1]) problems.push(`</${close[1]}> closes <${open ?? 'nothing'}>`);
      continue;
    }
    const m = /^<([^\s/>]+)((?:\s+[^\s=/>]+\s*=\s*(?:"[^"]*"|'[^']*'))*)\s*(\/?)>$/.exec(token);
    if (!m) {
      problems.push(`a malformed tag: ${token.slice(0, 40)}`);
      continue;
    }
    if (!NAME.test(m[1]!)) problems.push(`a bad element name: ${m[1]}`);
    const attrs = [...m[2]!.matchAll(/([^\s=]+)\s*=\s*("[^"]*"|'[^']*')/g)];
    const names = attrs.map((a) => a[1]!);
    if (new Set(names).size !== names.length) problems.push(`a repeated attribute in <${m[1]}>`);
    for (const a of attrs) if (ENTITY.test(a[2]!)) problems.push(`a bare & in attribute ${a[1]}`);
    if (stack.length === 0) roots++;
    if (m[3] !== '/') stack.push(m[1]!);
  }
  if (stack.length > 0) problems.push(`unclosed <${stack.join('>, <')}>`);
  if (roots !== 1) problems.push(`${roots} root elements`);
  return problems;
}
