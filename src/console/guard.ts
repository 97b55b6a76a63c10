import type { FastifyRequest } from 'fastify';
import { ApiError } from '../platform/errors.js';
import type { Actor } from '../portal/audit.js';

/**
 * A preValidation after `requireSession`: the signed-in person must be an operator (403
 * otherwise, whatever roles they hold in organizations: customers never reach the console).
 */
export async function requireOperator(request: FastifyRequest): Promise<void> {
  if (!request.portal.person.operator) {
    throw new ApiError('FORBIDDEN', 'This is the operator console: your account is not an operator\'s');
  }
}

/** The operator of a console request, as audit rows name them. */
export function operatorActor(request: FastifyRequest): Actor {
  return { kind: 'operator', personId: request.portal.person.id };
}
