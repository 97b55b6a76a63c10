import type { FastifyRequest } from 'fastify';
import { ApiError } from '../platform/errors.js';
import type { Actor } from '../portal/audit.js';

/** The start of the 403 message to an operator without two-factor; the console's web app knows it. */
export const TWO_FACTOR_FIRST = 'Set up two-factor authentication first';

/**
 * A preValidation after `requireSession`: the signed-in person must be an operator (403
 * otherwise, whatever roles they hold in organizations: customers never reach the console) with
 * two-factor on (the console moves money: a password alone must not be enough to act).
 */
export async function requireOperator(request: FastifyRequest): Promise<void> {
  if (!request.portal.person.operator) {
    throw new ApiError('FORBIDDEN', 'This is the operator console: your account is not an operator\'s');
  }
  if (!request.portal.person.totpEnabled) {
    throw new ApiError('FORBIDDEN', `${TWO_FACTOR_FIRST}: operators act in the console only with it on. Turn it on under Account, then come back.`);
  }
}

/** The operator of a console request, as audit rows name them. */
export function operatorActor(request: FastifyRequest): Actor {
  return { kind: 'operator', personId: request.portal.person.id };
}
