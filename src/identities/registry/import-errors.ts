import type { TLocalizedValidationError } from 'typebox/error';

/**
 * Why an import line is refused, in one line that names fields and never quotes a value: the
 * lines hold BVNs, NINs, phones and birth dates, and the reasons are printed and kept.
 */

type JsonSchema = {
  anyOf?: JsonSchema[];
  const?: unknown;
  type?: string;
  pattern?: string;
  minimum?: number;
  description?: string;
  [key: string]: unknown;
};

// A field or type name a person would write; anything else (a number, an email) is not quoted.
const NAME = /^[A-Za-z_][A-Za-z0-9_]{0,63}$/;

/** A name taken from the line, or a stand-in when it could be a value put where a name goes. */
export function safeName(name: string): string {
  return NAME.test(name) ? name : '(a field whose name is not a word)';
}

/**
 * JSON.parse's reason without the part of the line V8 quotes ("Unexpected token 'o', "not json"
 * is not valid JSON"): the position is kept, the text is not.
 */
export function jsonProblem(error: unknown): string {
  const message = error instanceof Error ? error.message : String(error);
  const reason = message.replace(/,?\s*".*$/s, '').trim();
  return reason === '' ? 'not valid JSON' : `not valid JSON (${reason})`;
}

/** TypeBox errors as one line naming each field: `record.bvn must match pattern ^\d{11}$`. */
export function describeErrors(errors: TLocalizedValidationError[], root: unknown): string {
  // A union reports each failed branch and then itself; only the union's own error is described.
  const unions = errors.filter((error) => error.keyword === 'anyOf').map((error) => `${error.schemaPath}/anyOf/`);
  const messages: string[] = [];
  for (const error of errors) {
    if (unions.some((prefix) => error.schemaPath.startsWith(prefix))) continue;
    const path = fieldPath(error.instancePath);
    const schema = schemaAt(root, error.schemaPath);
    switch (error.keyword) {
      case 'required':
        for (const name of error.params.requiredProperties) messages.push(`${path}.${name} is required`);
        break;
      case 'additionalProperties':
        for (const name of error.params.additionalProperties) messages.push(`${path}.${safeName(name)} is not allowed`);
        break;
      case 'boolean':
        // `additionalProperties: false` reports each extra field twice; the error above names it.
        if (!error.schemaPath.endsWith('/additionalProperties')) messages.push(`${path} ${error.message}`);
        break;
      case 'anyOf':
        messages.push(`${path} must be ${describeUnion(schema?.anyOf ?? [])}`);
        break;
      case 'type':
        messages.push(`${path} must be ${withArticle(String(error.params.type))}${explain(schema)}`);
        break;
      case 'pattern':
        // A described pattern (the dates) reads better as its description than as a regex.
        messages.push(schema?.description ? `${path} must be ${schema.description}` : `${path} must match pattern ${error.params.pattern}`);
        break;
      default:
        messages.push(`${path} ${error.message}`);
    }
  }
  return messages.join('; ');
}

function fieldPath(instancePath: string): string {
  const segments = instancePath
    .split('/')
    .slice(1)
    .map((segment) => safeName(segment.replace(/~1/g, '/').replace(/~0/g, '~')));
  return ['record', ...segments].join('.');
}

function schemaAt(root: unknown, schemaPath: string): JsonSchema | undefined {
  let node: unknown = root;
  for (const segment of schemaPath.split('/').slice(1)) {
    if (typeof node !== 'object' || node === null) return undefined;
    node = (node as Record<string, unknown>)[segment];
  }
  return typeof node === 'object' && node !== null ? (node as JsonSchema) : undefined;
}

function describeUnion(branches: JsonSchema[]): string {
  if (branches.length > 0 && branches.every((branch) => 'const' in branch)) {
    return `one of ${branches.map((branch) => JSON.stringify(branch.const)).join(', ')}`;
  }
  return branches
    .map((branch) => {
      const kind = withArticle(branch.type ?? 'value');
      if (branch.pattern !== undefined) return `${kind} matching ${branch.pattern}`;
      if (branch.minimum !== undefined) return `${kind} >= ${branch.minimum}`;
      return kind;
    })
    .join(' or ');
}

function withArticle(noun: string): string {
  return `${/^[aeiou]/.test(noun) ? 'an' : 'a'} ${noun}`;
}

function explain(schema: JsonSchema | undefined): string {
  return schema?.description ? ` (${schema.description})` : '';
}
