import { randomBytes } from 'node:crypto';
import type { Kysely } from 'kysely';
import type { DB } from '../platform/db/schema.js';
import { audit } from '../portal/audit.js';
import { insertPerson, isEmailAddress, normaliseEmail } from '../portal/people.js';
import { hashToken, newToken } from '../portal/sessions.js';

/** How long the sign-in link of a new operator stays good. */
export const OPERATOR_LINK_TTL_MS = 24 * 60 * 60 * 1000;

/** A refusal the command line prints as its one line. */
export class OperatorInputError extends Error {
  override name = 'OperatorInputError';
}

export interface CreatedOperator {
  id: string;
  email: string;
  name: string;
  /** Opens the portal's set-password page; once, within `linkExpiresAt`. */
  signInLink: string;
  linkExpiresAt: string;
}

/**
 * Makes a person with the operator role (the console's staff). They have no usable password
 * until they open the sign-in link, which sets one (the portal's password-reset page, with a
 * token good for a day). An address that already belongs to a person is refused: customers are
 * never operators, and an operator's account is theirs alone. Written with its audit row.
 */
export async function createOperator(db: Kysely<DB>, input: { email: string; name?: string | undefined }, publicUrl: string): Promise<CreatedOperator> {
  const email = normaliseEmail(input.email);
  if (!isEmailAddress(email)) throw new OperatorInputError(`--email "${input.email}" is not an email address`);
  const name = (input.name ?? email.split('@')[0]!).trim();
  if (!name || name.length > 200) throw new OperatorInputError('--name must be 1 to 200 characters');
  const existing = await db.selectFrom('people').select('operator_role').where('email', '=', email).executeTakeFirst();
  if (existing) {
    throw new OperatorInputError(
      existing.operator_role ? `${email} is already an operator` : `${email} already has a customer account; an operator needs an address of their own`,
    );
  }
  const token = newToken();
  const expiresAt = new Date(Date.now() + OPERATOR_LINK_TTL_MS);
  const id = await db.transaction().execute(async (trx) => {
    // A password nobody knows: the link sets the real one.
    const personId = await insertPerson(trx, { email, name, password: randomBytes(32).toString('base64url'), verified: true });
    await trx.updateTable('people').set({ operator_role: 'operator' }).where('id', '=', personId).execute();
    await trx.insertInto('person_tokens').values({ token_hash: hashToken(token), person_id: personId, purpose: 'reset_password', expires_at: expiresAt }).execute();
    await audit(trx, { orgId: null, actor: { kind: 'cli' }, action: 'operator.created', target: email, after: { email, name } });
    return personId;
  });
  return { id, email, name, signInLink: `${publicUrl.replace(/\/+$/, '')}/reset-password?token=${token}`, linkExpiresAt: expiresAt.toISOString() };
}
