// Express 5 route paths (path-to-regexp 8: `:name`, `*name`, `{optional}` groups) as OpenAPI path
// templates (`{name}`). An optional group gives two templates (with and without it), since OpenAPI
// has no optional path segments. Runs on the routes' own source paths, never on request input.

export interface PathTemplate {
  /** OpenAPI template, e.g. `/api/remote/machines/{id}`. */
  template: string;
  /** Parameter names in order; `wildcard` ones match several segments (`*name`). */
  params: { name: string; wildcard: boolean }[];
}

const isNameChar = (c: string) => /[A-Za-z0-9_$]/.test(c);

/** Expands `{...}` optional groups (nesting allowed) into every variant. */
function expandOptional(path: string): string[] {
  const open = path.indexOf('{');
  if (open < 0) return [path];
  let depth = 0;
  for (let i = open; i < path.length; i++) {
    if (path[i] === '{') depth++;
    else if (path[i] === '}' && --depth === 0) {
      const head = path.slice(0, open);
      const inner = path.slice(open + 1, i);
      const tail = path.slice(i + 1);
      return [...expandOptional(head + inner + tail), ...expandOptional(head + tail)];
    }
  }
  return [path];
}

export function pathTemplates(expressPath: string): PathTemplate[] {
  return expandOptional(expressPath).map((p) => {
    const params: PathTemplate['params'] = [];
    let out = '';
    for (let i = 0; i < p.length; i++) {
      const c = p[i]!;
      if ((c === ':' || c === '*') && i + 1 < p.length && isNameChar(p[i + 1]!)) {
        let j = i + 1;
        while (j < p.length && isNameChar(p[j]!)) j++;
        const name = p.slice(i + 1, j);
        params.push({ name, wildcard: c === '*' });
        out += `{${name}}`;
        i = j - 1;
      } else if (c === '\\' && i + 1 < p.length) {
        out += p[++i];
      } else out += c;
    }
    return { template: out || '/', params };
  });
}
