import { ApiRequestError, errorMessage } from '../../api/client';

/**
 * The server's message about one field, shown under that field. A style-A validation message
 * starts with the field's name ("password must be at least 10 characters"); several are joined
 * with "; ".
 */
export function fieldError(error: unknown, field: string): string | undefined {
  if (!(error instanceof ApiRequestError) || error.code !== 'VALIDATION_ERROR') return undefined;
  return error.message.split('; ').find((part) => part === field || part.startsWith(`${field} `) || part.startsWith(`${field}.`));
}

/** The message for the form's alert: any error that no field of `fields` shows. */
export function formError(error: unknown, fields: readonly string[]): string | undefined {
  if (!error) return undefined;
  return fields.some((field) => fieldError(error, field)) ? undefined : errorMessage(error);
}
