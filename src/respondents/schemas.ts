import { Type, type TSchema } from 'typebox';
import { DEFAULT_LIMIT, MAX_LIMIT } from '../platform/pagination.js';
import { ErrorStyleA } from '../platform/error-schemas.js';

/** Envelopes and errors shared by the guarantor and employment routes (spec: Response envelopes). */

export const success = <T extends TSchema>(data: T) => Type.Object({ status: Type.Literal('success'), data });

export const list = <T extends TSchema>(item: T) =>
  Type.Object({
    status: Type.Literal('success'),
    _pagination: Type.Object({
      limit: Type.Integer({ description: `Default ${DEFAULT_LIMIT}, at most ${MAX_LIMIT}` }),
      offset: Type.Integer(),
      total: Type.Integer({ description: 'Exact number of records' }),
    }),
    data: Type.Array(item),
  });

export const Cancelled = Type.Object({ status: Type.Literal('success'), data: Type.Literal('ok') });

export const ErrorA = ErrorStyleA;

export const IdParam = Type.Object({ id: Type.String({ description: 'The verification id (a number)' }) });

export const StatusObject = Type.Object(
  { status: Type.String(), subStatus: Type.String(), state: Type.String() },
  { description: 'See docs/states.md for every value' },
);

export const CompleteBody = Type.Object({
  outcome: Type.Union([Type.Literal('verified'), Type.Literal('failed')], {
    description: 'verified: the respondent confirms; failed: the respondent declines',
  }),
});

/** Error responses of the workflow routes, all style A. */
export function workflowErrors(...codes: (400 | 401 | 402 | 403 | 404 | 409 | 429 | 503)[]) {
  const out: Record<number, typeof ErrorA> = { 401: ErrorA, 500: ErrorA };
  for (const code of codes) out[code] = ErrorA;
  return out;
}
