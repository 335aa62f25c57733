import type { ValidateFunction } from 'ajv';
import { Ajv2020 } from 'ajv/dist/2020.js';

type Json = Record<string, unknown>;
const BASE = 'https://reader.local/openapi.json';

export interface CheckedResponse {
  method: string;
  path: string;
  status: number;
  contentType: string | null;
  body: unknown;
}

/**
 * Checks responses against the served OpenAPI document: the path must be documented (or the
 * response a documented-shape 404), the status documented for it, the content type the one it
 * declares and the body valid against the declared schema. Any mismatch throws.
 */
export class OpenApiValidator {
  private readonly ajv = new Ajv2020({ strict: false, allErrors: true, validateFormats: false });
  private readonly cache = new Map<string, ValidateFunction>();
  private readonly templates: { template: string; re: RegExp }[];

  constructor(private readonly doc: Json) {
    this.ajv.addSchema({ $id: BASE, components: doc.components }, BASE);
    this.templates = Object.keys(doc.paths as Json).map((template) => ({
      template,
      re: new RegExp(`^${template.replace(/[.*+?^$()|[\]\\]/g, '\\$&').replace(/\{[^}]+\}/g, '[^/]+')}$`),
    }));
  }

  private compile(key: string, schema: unknown): ValidateFunction {
    let v = this.cache.get(key);
    if (!v) {
      const absolute = JSON.parse(
        JSON.stringify(schema).replaceAll('"#/components/', `"${BASE}#/components/`),
      ) as Json;
      v = this.ajv.compile(absolute);
      this.cache.set(key, v);
    }
    return v;
  }

  template(path: string): string | null {
    return this.templates.find((t) => t.re.test(path))?.template ?? null;
  }

  check(r: CheckedResponse): void {
    const where = `${r.method} ${r.path} → ${r.status}`;
    const template = this.template(r.path);
    let spec: Json | undefined;
    if (template === null || !['GET', 'HEAD'].includes(r.method)) {
      // Undocumented route or method: only the error shape may come back.
      if (![404, 405, 429].includes(r.status) && !(r.method === 'OPTIONS' && r.status === 204))
        throw new Error(`${where}: undocumented route answered ${r.status}`);
      if (r.status === 204) return;
      spec = { content: { 'application/json': { schema: { $ref: '#/components/schemas/Error' } } } };
    } else {
      const op = (this.doc.paths as Record<string, Record<string, Json>>)[template]!.get!;
      spec = (op.responses as Record<string, Json>)[String(r.status)];
      if (!spec && r.status === 404) {
        spec = { content: { 'application/json': { schema: { $ref: '#/components/schemas/Error' } } } };
      }
      if (!spec) throw new Error(`${where}: status ${r.status} is not documented for ${template}`);
    }
    const content = spec.content as Record<string, { schema: unknown }> | undefined;
    if (!content || r.status === 304 || r.method === 'HEAD') {
      if (r.status === 304 && r.body !== undefined && r.body !== '')
        throw new Error(`${where}: 304 with a body`);
      return;
    }
    const [type, media] = Object.entries(content)[0]!;
    if (!r.contentType?.startsWith(type))
      throw new Error(`${where}: content-type ${r.contentType}, documented ${type}`);
    if (type !== 'application/json') return;
    const validate = this.compile(`${template}|${r.status}|${JSON.stringify(media.schema)}`, media.schema);
    if (!validate(r.body)) {
      throw new Error(
        `${where}: body does not match the OpenAPI schema: ${this.ajv.errorsText(validate.errors, { separator: '; ' })}\n${JSON.stringify(r.body).slice(0, 500)}`,
      );
    }
  }
}
