type Json = Record<string, unknown>;

const esc = (s: string) =>
  s.replace(
    /[&<>"']/g,
    (ch) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[ch]!,
  );

/** Minimal markdown for the description: headings, bullet lists, `code`, **bold**, paragraphs. */
function markdown(text: string): string {
  const inline = (s: string) =>
    esc(s)
      .replace(/`([^`]+)`/g, '<code>$1</code>')
      .replace(/\*\*([^*]+)\*\*/g, '<strong>$1</strong>');
  const out: string[] = [];
  let para: string[] = [];
  let list: string[] = [];
  const flush = () => {
    if (para.length) out.push(`<p>${inline(para.join(' '))}</p>`);
    if (list.length) out.push(`<ul>${list.map((l) => `<li>${inline(l)}</li>`).join('')}</ul>`);
    para = [];
    list = [];
  };
  for (const line of text.split('\n')) {
    if (line.startsWith('## ')) {
      flush();
      out.push(`<h3>${inline(line.slice(3))}</h3>`);
    } else if (line.startsWith('- ')) {
      if (para.length) flush();
      list.push(line.slice(2));
    } else if (line.trim() === '') flush();
    else if (list.length && line.startsWith('  ')) list[list.length - 1] += ` ${line.trim()}`;
    else para.push(line);
  }
  flush();
  return out.join('\n');
}

/**
 * The reference page: a server-rendered HTML view of the OpenAPI document (no scripts, no CDN):
 * the description, then each path with its parameters and responses, then every schema.
 */
export function renderDocs(doc: Json): string {
  const info = doc.info as { title: string; version: string; description: string };
  const paths = doc.paths as Record<string, Record<string, Json>>;
  const schemas = (doc.components as { schemas: Record<string, unknown> }).schemas;
  const sections: string[] = [];
  for (const [path, ops] of Object.entries(paths)) {
    for (const [method, op] of Object.entries(ops)) {
      const params = (op.parameters as Json[] | undefined) ?? [];
      const responses = op.responses as Record<string, Json>;
      const rows = params
        .map(
          (p) =>
            `<tr><td><code>${esc(String(p.name))}</code></td><td>${esc(String(p.in))}</td><td>${p.required ? 'yes' : 'no'}</td><td>${esc(String(p.description ?? ''))}</td><td><code>${esc(JSON.stringify(p.schema))}</code></td></tr>`,
        )
        .join('');
      const resp = Object.entries(responses)
        .map(([status, r]) => {
          const content = r.content as Record<string, { schema: unknown }> | undefined;
          const schema = content ? Object.values(content)[0]?.schema : undefined;
          const headers = r.headers ? Object.keys(r.headers as Json).join(', ') : '';
          return `<tr><td>${esc(status)}</td><td>${esc(String(r.description ?? ''))}</td><td><code>${esc(schema ? JSON.stringify(schema) : '')}</code></td><td>${esc(headers)}</td></tr>`;
        })
        .join('');
      sections.push(`<section id="${esc(`${method}-${path}`)}">
<h3><span class="m">${esc(method.toUpperCase())}</span> <code>${esc(path)}</code></h3>
<p>${esc(String(op.summary ?? ''))}</p>
${rows ? `<h4>Parameters</h4><table><tr><th>name</th><th>in</th><th>required</th><th>description</th><th>schema</th></tr>${rows}</table>` : '<p><em>No parameters; any query parameter is a 400.</em></p>'}
<h4>Responses</h4><table><tr><th>status</th><th>description</th><th>body</th><th>headers</th></tr>${resp}</table>
</section>`);
    }
  }
  const schemaHtml = Object.entries(schemas)
    .map(
      ([id, s]) => `<h3 id="schema-${esc(id)}">${esc(id)}</h3><pre>${esc(JSON.stringify(s, null, 2))}</pre>`,
    )
    .join('\n');
  const toc = Object.keys(paths)
    .map((p) => `<li><a href="#get-${esc(p)}"><code>${esc(p)}</code></a></li>`)
    .join('');
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>${esc(info.title)}</title>
<meta name="viewport" content="width=device-width, initial-scale=1">
<style>
body{font:15px/1.5 system-ui,sans-serif;max-width:72rem;margin:2rem auto;padding:0 1rem;color:#222}
code,pre{font:13px ui-monospace,monospace;background:#f4f4f4;border-radius:3px}
pre{padding:.75rem;overflow:auto}table{border-collapse:collapse;width:100%;margin:.5rem 0}
td,th{border:1px solid #ddd;padding:.3rem .5rem;text-align:left;vertical-align:top}
td code{word-break:break-all}.m{background:#2a7;color:#fff;padding:0 .4rem;border-radius:3px}
section{border-top:1px solid #ccc;margin-top:1.5rem}
</style></head><body>
<h1>${esc(info.title)} <small>v${esc(info.version)}</small></h1>
<p>Machine-readable: <a href="/openapi.json">/openapi.json</a></p>
<h2>Contents</h2><ul>${toc}</ul>
<h2>Overview</h2>
${markdown(info.description)}
<h2>Endpoints</h2>
${sections.join('\n')}
<h2>Schemas</h2>
${schemaHtml}
</body></html>`;
}
