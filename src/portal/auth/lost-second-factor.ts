import { sql, type Kysely } from 'kysely';
import type { DB } from '../../platform/db/schema.js';
import { audit } from '../audit.js';
import type { PeopleMail } from '../mail.js';
import { normaliseEmail } from '../people.js';
import { turnOffSecondFactor } from './second-factor.js';
import { counterKey } from './throttle.js';
import { notFound } from '../../platform/not-found.js';

/** What `vouch person reset-second-factor` did. */
export interface SecondFactorReset {
  id: string;
  email: string;
  /** Active sessions ended (every device, a sign-in waiting for its code included). */
  sessionsEnded: number;
  /** Unused recovery codes that stopped working. */
  recoveryCodesRemoved: number;
}

/** The reason a reset was refused, for the CLI's one stderr line. */
export class SecondFactorResetError extends Error {}

/**
 * Turns off the second factor of a person who lost their authenticator app and recovery codes,
 * for the installation's administrator (who holds the database; there is no route for it). The
 * secret, its lock and its recovery codes go; every session of the person ends (whoever holds
 * one signs in again, with the password alone until they set a new app up; operators must before
 * the console opens); each organization they belong to gets an audit event, and the person is
 * mailed, so a reset they did not ask for does not go unnoticed.
 */
export async function resetSecondFactor(db: Kysely<DB>, mail: PeopleMail, input: { email: string; publicUrl: string }): Promise<{ reset: SecondFactorReset; mailId: number }> {
  const email = normaliseEmail(input.email);
  return db.transaction().execute(async (trx) => {
    const person = await trx.selectFrom('people').select(['id', 'email', 'name', 'totp_enabled_at']).where('email', '=', email).forUpdate().executeTakeFirst();
    if (!person) throw notFound(new SecondFactorResetError(`no person has the email ${email}`));
    if (!person.totp_enabled_at) throw new SecondFactorResetError(`${person.email} has no second factor on; nothing was changed`);

    const recoveryCodesRemoved = await turnOffSecondFactor(trx, person.id);
    const sessions = await trx
      .updateTable('portal_sessions')
      .set({ revoked_at: sql<Date>`now()` })
      .where('person_id', '=', person.id)
      .where('revoked_at', 'is', null)
      .where('expires_at', '>', sql<Date>`now()`)
      .executeTakeFirst();
    await trx.deleteFrom('auth_counters').where('key', '=', counterKey('reauth', person.id)).execute();

    const orgs = await trx.selectFrom('memberships').select('org_id').where('person_id', '=', person.id).execute();
    for (const orgId of orgs.length ? orgs.map((row) => row.org_id) : [null]) {
      await audit(trx, { orgId, actor: { kind: 'cli' }, action: 'member.second_factor_reset', target: person.email });
    }
    const base = input.publicUrl.replace(/\/+$/, '');
    const mailId = await mail.queue(trx, {
      kind: 'second_factor_reset',
      to: person.email,
      subject: 'Two-factor authentication was turned off on your Vouch account',
      text:
        `Hello ${person.name},\n\nThe administrator of this Vouch turned off two-factor authentication on your account, as asked when an authenticator app and its recovery codes are lost. Every device signed in to your account was signed out, and your recovery codes no longer work.\n\n` +
        `Sign in with your password and set up two-factor authentication again on your account page:\n\n${base}/login\n\n` +
        `If you did not ask for this, reset your password now and tell the administrator:\n\n${base}/forgot-password\n`,
    });
    return {
      reset: { id: person.id, email: person.email, sessionsEnded: Number(sessions.numUpdatedRows), recoveryCodesRemoved },
      mailId,
    };
  });
}
