import { ApiRequestError, errorMessage } from '../../api/client';

/**
 * The server's style-A validation message split by field: each problem starts with the field's
 * path ("street is required", "applicant.idNumber must be …"), several joined with "; ". What
 * no field of the form shows goes to the form's alert.
 */
export function splitErrors(error: unknown, fields: readonly string[]): { byField: Record<string, string>; rest: string | undefined } {
  if (!error) return { byField: {}, rest: undefined };
  if (!(error instanceof ApiRequestError) || error.code !== 'VALIDATION_ERROR') return { byField: {}, rest: errorMessage(error) };
  const byField: Record<string, string> = {};
  const rest: string[] = [];
  for (const part of error.message.split('; ')) {
    // The longest field name first, so "applicant.phone" wins over "phone".
    const field = [...fields].sort((a, b) => b.length - a.length).find((name) => part === name || part.startsWith(`${name} `));
    if (field) byField[field] = byField[field] ? `${byField[field]}; ${part}` : part;
    else rest.push(part);
  }
  return { byField, rest: rest.length > 0 ? rest.join('; ') : undefined };
}
