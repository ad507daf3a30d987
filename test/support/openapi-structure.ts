// The structural rules of OpenAPI 3.1 that matter to this API's document, checked without a
// validator package: required top-level fields, operations under known methods with unique
// operationIds and at least one response, path-template parameters declared exactly (required, in
// path), query parameters unique, security requirements naming declared schemes, and every $ref
// resolving inside the document. Returns the problems found (empty: valid by these rules).

type Json = Record<string, any>;
const METHODS = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace'];

function resolvePointer(doc: Json, ref: string): unknown {
  if (!ref.startsWith('#/')) return undefined;
  let node: any = doc;
  for (const raw of ref.slice(2).split('/')) {
    const key = raw.replaceAll('~1', '/').replaceAll('~0', '~');
    if (node === null || typeof node !== 'object' || !(key in node)) return undefined;
    node = node[key];
  }
  return node;
}

function templateParams(template: string): string[] {
  const out: string[] = [];
  let i = template.indexOf('{');
  while (i >= 0) {
    const j = template.indexOf('}', i);
    if (j < 0) break;
    out.push(template.slice(i + 1, j));
    i = template.indexOf('{', j);
  }
  return out;
}

export function openApiProblems(doc: Json): string[] {
  const problems: string[] = [];
  if (typeof doc.openapi !== 'string' || !/^3\.1\.\d+$/.test(doc.openapi))
    problems.push('openapi is not 3.1.x');
  if (typeof doc.info?.title !== 'string' || typeof doc.info?.version !== 'string')
    problems.push('info.title and info.version are required strings');
  if (!doc.paths || typeof doc.paths !== 'object') problems.push('paths is required');
  const schemes = doc.components?.securitySchemes ?? {};
  const ids = new Set<string>();
  for (const [template, item] of Object.entries<Json>(doc.paths ?? {})) {
    if (!template.startsWith('/')) problems.push(`${template}: a path must start with /`);
    const declaredInTemplate = templateParams(template);
    for (const [method, op] of Object.entries<Json>(item)) {
      const where = `${method.toUpperCase()} ${template}`;
      if (!METHODS.includes(method)) {
        if (method !== 'parameters' && method !== 'summary' && method !== 'description')
          problems.push(`${where}: unknown method`);
        continue;
      }
      if (typeof op.operationId === 'string') {
        if (ids.has(op.operationId)) problems.push(`${where}: duplicate operationId ${op.operationId}`);
        ids.add(op.operationId);
      }
      const responses = op.responses ?? {};
      if (Object.keys(responses).length === 0) problems.push(`${where}: no responses`);
      for (const [status, r] of Object.entries<Json>(responses)) {
        if (!/^([1-5]\d\d|[1-5]XX|default)$/.test(status))
          problems.push(`${where}: bad status key ${status}`);
        if (!r.$ref && typeof r.description !== 'string')
          problems.push(`${where} ${status}: description required`);
      }
      const params: Json[] = [...(item.parameters ?? []), ...(op.parameters ?? [])];
      const seen = new Set<string>();
      for (const p of params) {
        const key = `${p.in}:${p.name}`;
        if (seen.has(key)) problems.push(`${where}: parameter ${key} declared twice`);
        seen.add(key);
        if (!['path', 'query', 'header', 'cookie'].includes(p.in))
          problems.push(`${where}: parameter ${p.name} has bad in`);
        if (p.in === 'path' && p.required !== true)
          problems.push(`${where}: path parameter ${p.name} must be required`);
        if (p.in === 'path' && !declaredInTemplate.includes(p.name))
          problems.push(`${where}: path parameter ${p.name} is not in the template`);
        if (!p.schema && !p.content) problems.push(`${where}: parameter ${p.name} has no schema`);
      }
      for (const name of declaredInTemplate)
        if (!seen.has(`path:${name}`))
          problems.push(`${where}: template parameter {${name}} is not declared`);
      for (const requirement of op.security ?? doc.security ?? [])
        for (const name of Object.keys(requirement))
          if (!schemes[name]) problems.push(`${where}: security scheme ${name} is not declared`);
      if (op.requestBody && !op.requestBody.content) problems.push(`${where}: requestBody without content`);
    }
  }
  const visit = (node: unknown, at: string) => {
    if (Array.isArray(node)) {
      for (const [i, n] of node.entries()) visit(n, `${at}/${i}`);
    } else if (node && typeof node === 'object') {
      for (const [k, v] of Object.entries(node)) {
        if (k === '$ref' && typeof v === 'string' && resolvePointer(doc, v) === undefined)
          problems.push(`${at}: $ref ${v} does not resolve`);
        visit(v, `${at}/${k}`);
      }
    }
  };
  visit(doc, '#');
  return problems;
}

/** Every JSON Schema in the document (parameters, bodies, responses, components). */
export function schemasOf(doc: Json): { at: string; schema: Json }[] {
  const out: { at: string; schema: Json }[] = [];
  for (const [name, s] of Object.entries<Json>(doc.components?.schemas ?? {}))
    out.push({ at: `components/schemas/${name}`, schema: s });
  for (const [template, item] of Object.entries<Json>(doc.paths ?? {}))
    for (const [method, op] of Object.entries<Json>(item)) {
      const where = `${method.toUpperCase()} ${template}`;
      for (const p of op.parameters ?? [])
        if (p.schema) out.push({ at: `${where} ${p.in}:${p.name}`, schema: p.schema });
      const body = op.requestBody?.content?.['application/json']?.schema;
      if (body) out.push({ at: `${where} body`, schema: body });
      for (const [status, r] of Object.entries<Json>(op.responses ?? {})) {
        const s = r.content?.['application/json']?.schema;
        if (s) out.push({ at: `${where} ${status}`, schema: s });
      }
    }
  return out;
}
