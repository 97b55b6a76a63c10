/**
 * The one rule for scalar types in request bodies (docs/errors.md): text converts to the field's
 * type, nothing converts to text. A JSON body's value may be written as text where the field takes
 * a boolean (`"true"`, `"false"`: the spec's sample sends canContactPoc so) or a number (`"5000"`),
 * and one text value stands for a list of one (`"acceptableIdType": "NIN"`); a form's fields are
 * all text and convert alike. Nothing else converts: a number, a boolean, null or a list where the
 * field is text is a 400 naming the field (`{"name": 5}`; `12345678901234567890` has already lost
 * digits in any JSON parser), as are a boolean or null where it is a number. A schema that takes
 * another type says so itself (rcNumber: text or a whole number). Query strings and path
 * parameters are text by nature and convert to their field's type as Ajv's coercion does.
 */

export type Validate = ((data: unknown, context?: unknown) => unknown) & { errors?: unknown };

interface AjvError {
  keyword: string;
  instancePath: string;
  params: { type?: string | string[] };
}

/** The value at an Ajv instance path (a JSON pointer) in the data, or undefined. */
function valueAt(data: unknown, pointer: string): unknown {
  if (pointer === '') return data;
  let value = data;
  for (const token of pointer.slice(1).split('/')) {
    if (value === null || typeof value !== 'object') return undefined;
    value = (value as Record<string, unknown>)[token.replace(/~1/g, '/').replace(/~0/g, '~')];
  }
  return value;
}

/** Whether the rule takes `value` for a field of one of the `expected` types (converted by Ajv). */
function converts(value: unknown, expected: string | string[] | undefined): boolean {
  if (typeof value !== 'string') return false;
  const types = Array.isArray(expected) ? expected : String(expected).split(',');
  return types.some((type) => type === 'number' || type === 'integer' || type === 'array' || (type === 'boolean' && (value === 'true' || value === 'false')));
}

/**
 * A body validator from two compilations of one schema: `strict` (no type coercion) decides, and
 * only when each of its type errors is a conversion the rule takes does `coercing` (Ajv's
 * coercion) validate and convert in place. Under a union, a value passes when one branch takes it.
 */
export function textToTypeValidator(strict: Validate, coercing: Validate): Validate {
  const validate: Validate = (data, context) => {
    if (strict(data, context)) {
      validate.errors = null;
      return true;
    }
    const errors = (strict.errors ?? []) as AjvError[];
    const typeErrors = errors.filter((error) => error.keyword === 'type');
    const taken = new Set(typeErrors.filter((error) => converts(valueAt(data, error.instancePath), error.params.type)).map((error) => error.instancePath));
    if (typeErrors.length === 0 || typeErrors.some((error) => !taken.has(error.instancePath))) {
      validate.errors = errors;
      return false;
    }
    const valid = coercing(data, context);
    validate.errors = coercing.errors;
    return valid;
  };
  return validate;
}
