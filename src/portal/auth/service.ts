import { randomUUID } from 'node:crypto';
import type { FastifyBaseLogger } from 'fastify';
import { sql, type Kysely } from 'kysely';
import { generateSecret as generateTotpSecret, generateURI } from 'otplib';
import { AccountsService } from '../../accounts/service.js';
import { addressKey } from '../../platform/client-address.js';
import type { DB } from '../../platform/db/schema.js';
import { ApiError } from '../../platform/errors.js';
import { checkName } from '../../platform/input.js';
import { audit } from '../audit.js';
import type { PeopleMail } from '../mail.js';
import { hashPassword, insertPerson, MIN_PASSWORD_LENGTH, normaliseEmail, verifyPassword } from '../people.js';
import { createSession, hashToken, newToken, revokeOtherSessions, revokeSession, SESSION_LIFETIME_MS } from '../sessions.js';
import { checkSecondFactor, LockedError, replaceRecoveryCodes, totpStep, turnOffSecondFactor } from './second-factor.js';
import { AuthCounters, counterKey, type CounterRule } from './throttle.js';

/**
 * Wrong passwords for one email from one client address: the fifth pauses that address's
 * sign-ins to that email for 15 minutes. The owner elsewhere is not affected.
 */
export const PASSWORD_PER_CLIENT: CounterRule = { limit: 5, windowMs: 15 * 60 * 1000, blockMs: 15 * 60 * 1000 };
/**
 * Wrong passwords for one email from anywhere in an hour (guessing spread over many addresses):
 * past it, only addresses the person signed in from before (KNOWN_ADDRESS_DAYS) may try.
 */
export const PASSWORD_PER_EMAIL: CounterRule = { limit: 50, windowMs: 60 * 60 * 1000, blockMs: 60 * 60 * 1000 };
export const KNOWN_ADDRESS_DAYS = 90;
/**
 * Wrong current passwords re-entered by a signed-in person (changing the password, turning
 * two-factor on or off, new recovery codes): a stolen session must not be able to guess the
 * password at leisure. The fifth in 15 minutes signs out the device that made it and pauses
 * these changes for the person, on every device, for 15 minutes; signing in is not affected.
 */
export const CURRENT_PASSWORD_PER_PERSON: CounterRule = { limit: 5, windowMs: 15 * 60 * 1000, blockMs: 15 * 60 * 1000 };
/**
 * Sign-up mails (the link, or "you already have an account") to one address a day: sign-up is open
 * to anyone, and the mail carries the name and organization name they typed. Counted after the
 * answer, so the answer is the same either way.
 */
export const SIGN_UP_MAILS_PER_ADDRESS: CounterRule = { limit: 5, windowMs: 24 * 60 * 60 * 1000, blockMs: 24 * 60 * 60 * 1000 };
const VERIFY_EMAIL_TTL_MS = 24 * 60 * 60 * 1000;
const RESET_TTL_MS = 60 * 60 * 1000;
/** A sign-in that still owes its TOTP code stays valid this long. */
const PENDING_TOTP_MS = 10 * 60 * 1000;

/** A hash to verify against when the email is unknown, so the answer takes as long either way. */
const DUMMY_HASH = hashPassword('not anybody’s password at all');

const WRONG_CODE = 'code is not right: enter the current 6-digit code from your authenticator app, or a recovery code';

export interface Client {
  userAgent?: string | undefined;
  ip?: string | undefined;
}

/** The password rules; `field` names the input in the message (the web app shows it there). */
export function checkPassword(password: string, email: string, field = 'password'): void {
  if (password.length < MIN_PASSWORD_LENGTH) {
    throw new ApiError('VALIDATION_ERROR', `${field} must be at least ${MIN_PASSWORD_LENGTH} characters`);
  }
  if (password.length > 200) throw new ApiError('VALIDATION_ERROR', `${field} must be at most 200 characters`);
  if (password.trim().toLowerCase() === normaliseEmail(email)) throw new ApiError('VALIDATION_ERROR', `${field} must not be your email address`);
}

function checkEmail(email: string): string {
  const normalised = normaliseEmail(email);
  if (!/^[^\s@]+@[^\s@]+\.[^\s@]+$/.test(normalised) || normalised.length > 254) {
    throw new ApiError('VALIDATION_ERROR', 'email must be an email address, like ada@example.com');
  }
  return normalised;
}

/**
 * Sign-up, sign-in (throttled per client address and per email, with a second factor), email
 * verification and password reset. Nothing an unauthenticated caller is answered tells whether an
 * address has an account: sign-up and forgot-password answer before the address is even looked
 * up (their mail is prepared after the answer), and sign-in counts unknown emails as it counts
 * known ones.
 */
export class AuthService {
  private readonly counters: AuthCounters;
  private readonly inFlight = new Set<Promise<void>>();

  constructor(
    private readonly db: Kysely<DB>,
    private readonly mail: PeopleMail,
    private readonly publicUrl: string,
    private readonly log: Pick<FastifyBaseLogger, 'error'>,
  ) {
    this.counters = new AuthCounters(db);
  }

  /**
   * Work done after the answer was sent; `settle` waits for it (the app's close). Started on the
   * next turn of the event loop, so even an embedded database, which works on this thread, does
   * it after the answer has gone.
   */
  private later(what: string, work: () => Promise<void>): void {
    const done: Promise<void> = new Promise<void>((resolve) => setImmediate(resolve))
      .then(work)
      .catch((err: unknown) => this.log.error({ err: err instanceof Error ? err.message : String(err) }, `${what} failed`))
      .finally(() => this.inFlight.delete(done));
    this.inFlight.add(done);
  }

  async settle(): Promise<void> {
    await Promise.all([...this.inFlight]);
  }

  /**
   * Starts a sign-up: the answer is the same whether or not the address has an account, and
   * comes before the address is looked up. A new address is mailed a link that finishes the
   * sign-up (`completeSignUp`: the password is chosen there, so nobody but the mailbox's owner
   * ever knows it); an address with an account is mailed a note to sign in or reset instead.
   */
  signUp(input: { name: string; email: string; organizationName: string }): void {
    const email = checkEmail(input.email);
    const name = input.name.trim();
    const organizationName = input.organizationName.trim();
    if (!name) throw new ApiError('VALIDATION_ERROR', 'name must not be empty');
    if (!organizationName) throw new ApiError('VALIDATION_ERROR', 'organizationName must not be empty');
    checkName(name, 'name');
    checkName(organizationName, 'organizationName');
    this.later('sign-up mail', () => this.mailSignUp(email, name, organizationName));
  }

  private async mailSignUp(email: string, name: string, organizationName: string): Promise<void> {
    // Anyone may ask for these mails to any address: past a few a day, that address gets no more.
    const { blockedUntil, last } = await this.counters.hit(counterKey('sign-up-mail', email), SIGN_UP_MAILS_PER_ADDRESS);
    if (blockedUntil && !last) return;
    const existing = await this.db.selectFrom('people').select(['name']).where('email', '=', email).executeTakeFirst();
    const token = newToken();
    const expiresAt = new Date(Date.now() + VERIFY_EMAIL_TTL_MS);
    const mailId = await this.db.transaction().execute(async (trx) => {
      if (existing) {
        return this.mail.queue(trx, {
          kind: 'sign_up_existing',
          to: email,
          subject: 'Someone tried to sign up to Vouch with your address',
          text: `Hello ${existing.name},\n\nSomeone (you, perhaps) tried to create a Vouch account with this address, which already has one. Nothing was changed.\n\nTo use your account, sign in:\n\n${this.publicUrl}/login\n\nForgot your password? Reset it:\n\n${this.publicUrl}/forgot-password\n\nIf it was not you, ignore this message.\n`,
        });
      }
      await trx.deleteFrom('pending_sign_ups').where('expires_at', '<', sql<Date>`now()`).execute();
      await trx.insertInto('pending_sign_ups').values({ token_hash: hashToken(token), email, name, organization_name: organizationName, expires_at: expiresAt }).execute();
      return this.mail.queue(trx, {
        kind: 'complete_sign_up',
        expiresAt,
        to: email,
        subject: 'Finish creating your Vouch account',
        text: `Hello ${name},\n\nFinish creating your Vouch account for ${organizationName}: open this link and choose a password (valid for 24 hours):\n\n${this.publicUrl}/complete-sign-up?token=${token}\n\nIf you did not sign up for Vouch, ignore this message: no account is made.\n`,
      });
    });
    void this.mail.dispatch(mailId);
  }

  /**
   * Finishes a sign-up from its mailed link: the person (email verified: the link proved it), a new
   * organization (not enabled, balance 0) they own, signed in. The link works once.
   */
  async completeSignUp(token: string, password: string, client: Client) {
    const pending = await this.db
      .selectFrom('pending_sign_ups')
      .selectAll()
      .where('token_hash', '=', hashToken(token))
      .where('expires_at', '>', sql<Date>`now()`)
      .executeTakeFirst();
    if (!pending) throw new ApiError('BAD_REQUEST', 'This link is invalid, already used or expired. Sign up again.');
    checkPassword(password, pending.email);
    // A sign-up asked for before names were checked as they are now: a 400 that says which name,
    // and the link still works once the person signs up again (AccountsService.insert would refuse it).
    checkName(pending.organization_name, 'organizationName');
    checkName(pending.name, 'name');
    const orgId = randomUUID();
    const personId = await this.db.transaction().execute(async (trx) => {
      const claimed = await trx.deleteFrom('pending_sign_ups').where('token_hash', '=', pending.token_hash).executeTakeFirst();
      if (claimed.numDeletedRows === 0n) throw new ApiError('BAD_REQUEST', 'This link is invalid, already used or expired. Sign up again.');
      const taken = await trx.selectFrom('people').select('id').where('email', '=', pending.email).executeTakeFirst();
      if (taken) throw new ApiError('CONFLICT', 'An account with this email already exists: sign in, or reset your password');
      await new AccountsService(this.db).insert(trx, orgId, { name: pending.organization_name, email: pending.email, enabled: false });
      const personId = await insertPerson(trx, { email: pending.email, name: pending.name, password, verified: true });
      await trx.insertInto('memberships').values({ org_id: orgId, person_id: personId, role: 'owner' }).execute();
      await audit(trx, { orgId, actor: { kind: 'member', personId }, action: 'organization.created', after: { name: pending.organization_name } });
      return personId;
    });
    const session = await createSession(this.db, { personId, ...client });
    return { personId, orgId, session };
  }

  private async queueVerification(trx: Kysely<DB>, personId: string, email: string, name: string, token: string): Promise<number> {
    const expiresAt = new Date(Date.now() + VERIFY_EMAIL_TTL_MS);
    await trx
      .insertInto('person_tokens')
      .values({ token_hash: hashToken(token), person_id: personId, purpose: 'verify_email', expires_at: expiresAt })
      .execute();
    return this.mail.queue(trx, {
      kind: 'verify_email',
      expiresAt,
      to: email,
      subject: 'Confirm your email for Vouch',
      text: `Hello ${name},\n\nConfirm your email address by opening this link (valid for 24 hours):\n\n${this.publicUrl}/verify-email?token=${token}\n\nIf you did not sign up for Vouch, ignore this message.\n`,
    });
  }

  async resendVerification(personId: string): Promise<void> {
    const person = await this.db.selectFrom('people').select(['email', 'name', 'email_verified_at']).where('id', '=', personId).executeTakeFirstOrThrow();
    if (person.email_verified_at) throw new ApiError('CONFLICT', 'Your email address is already verified');
    const mailId = await this.db.transaction().execute((trx) => this.queueVerification(trx, personId, person.email, person.name, newToken()));
    void this.mail.dispatch(mailId);
  }

  async verifyEmail(token: string): Promise<void> {
    const personId = await this.useToken(token, 'verify_email');
    await this.db.updateTable('people').set({ email_verified_at: sql<Date>`coalesce(email_verified_at, now())` }).where('id', '=', personId).execute();
  }

  /** Marks a mailed token used and returns its person; 400 when unknown, used or expired. */
  private async useToken(token: string, purpose: 'verify_email' | 'reset_password', db: Kysely<DB> = this.db): Promise<string> {
    const row = await db
      .updateTable('person_tokens')
      .set({ used_at: sql<Date>`now()` })
      .where('token_hash', '=', hashToken(token))
      .where('purpose', '=', purpose)
      .where('used_at', 'is', null)
      .where('expires_at', '>', sql<Date>`now()`)
      .returning('person_id')
      .executeTakeFirst();
    if (!row) throw badLink(purpose);
    return row.person_id;
  }

  /**
   * Checks the password. Each attempt counts, before the check, towards PASSWORD_PER_CLIENT for
   * the (email, client address); a wrong one also towards PASSWORD_PER_EMAIL, past which only the
   * person's known addresses may try. Unknown emails are counted and answered exactly as known
   * ones. The right password clears the client's count; it does not touch the second factor's.
   */
  async signIn(input: { email: string; password: string }, client: Client) {
    const email = normaliseEmail(input.email);
    const address = client.ip ?? 'unknown';
    const perClient = await this.counters.hit(counterKey('pw', email, addressKey(address)), PASSWORD_PER_CLIENT);
    if (perClient.blockedUntil && !perClient.last) throw new LockedError(perClient.blockedUntil, 'password');
    const person = await this.db
      .selectFrom('people')
      .select(['id', 'password_hash', 'totp_enabled_at', 'totp_locked_until'])
      .where('email', '=', email)
      .executeTakeFirst();
    const capped = await this.counters.blockedUntil(counterKey('pw', email), PASSWORD_PER_EMAIL.limit);
    if (capped && !(person && (await this.knownAddress(person.id, address)))) throw new LockedError(capped, 'password');
    const right = await verifyPassword(person?.password_hash ?? (await DUMMY_HASH), input.password);
    if (!person || !right) {
      await this.counters.hit(counterKey('pw', email), PASSWORD_PER_EMAIL);
      if (perClient.blockedUntil) throw new LockedError(perClient.blockedUntil, 'password');
      throw new ApiError('ACCESS_DENIED', 'Wrong email or password');
    }
    await this.counters.clear(counterKey('pw', email, addressKey(address)));
    const totpRequired = person.totp_enabled_at !== null;
    if (totpRequired && person.totp_locked_until && person.totp_locked_until.getTime() > Date.now()) throw new LockedError(person.totp_locked_until, 'code');
    const session = await createSession(this.db, {
      personId: person.id,
      pendingTotp: totpRequired,
      ...(totpRequired ? { lifetimeMs: PENDING_TOTP_MS } : {}),
      ...client,
    });
    return { session, totpRequired };
  }

  /** Whether the person finished a sign-in from this address in the last KNOWN_ADDRESS_DAYS. */
  private async knownAddress(personId: string, address: string): Promise<boolean> {
    const row = await this.db
      .selectFrom('portal_sessions')
      .select('id')
      .where('person_id', '=', personId)
      .where('ip', '=', address)
      .where('pending_totp', '=', false)
      .where('created_at', '>', sql<Date>`now() - ${KNOWN_ADDRESS_DAYS} * interval '1 day'`)
      .limit(1)
      .executeTakeFirst();
    return row !== undefined;
  }

  /**
   * The second step of a sign-in with TOTP: the pending session becomes a full one. Wrong codes
   * are counted on their own (see checkSecondFactor); when they lock the second step, the pending
   * session ends with it.
   */
  async completeTotp(sessionId: string, personId: string, code: string): Promise<void> {
    let right: boolean;
    try {
      right = await checkSecondFactor(this.db, personId, code);
    } catch (err) {
      if (err instanceof LockedError) await revokeSession(this.db, personId, sessionId);
      throw err;
    }
    if (!right) throw new ApiError('ACCESS_DENIED', 'That code is not right: enter the current 6-digit code from your authenticator app, or a recovery code');
    await this.db
      .updateTable('portal_sessions')
      .set({ pending_totp: false, expires_at: new Date(Date.now() + SESSION_LIFETIME_MS) })
      .where('id', '=', sessionId)
      .execute();
  }

  /** Mails a reset link when the address has an account; answers before looking, the same either way. */
  forgotPassword(email: string): void {
    this.later('reset mail', () => this.mailResetLink(normaliseEmail(email)));
  }

  private async mailResetLink(email: string): Promise<void> {
    const person = await this.db.selectFrom('people').select(['id', 'email', 'name']).where('email', '=', email).executeTakeFirst();
    if (!person) return;
    const token = newToken();
    const expiresAt = new Date(Date.now() + RESET_TTL_MS);
    const mailId = await this.db.transaction().execute(async (trx) => {
      await trx
        .insertInto('person_tokens')
        .values({ token_hash: hashToken(token), person_id: person.id, purpose: 'reset_password', expires_at: expiresAt })
        .execute();
      return this.mail.queue(trx, {
        kind: 'reset_password',
        expiresAt,
        to: person.email,
        subject: 'Reset your Vouch password',
        text: `Hello ${person.name},\n\nSet a new password by opening this link (valid for one hour, once):\n\n${this.publicUrl}/reset-password?token=${token}\n\nIf you did not ask for this, ignore this message: your password stays as it is.\n`,
      });
    });
    void this.mail.dispatch(mailId);
  }

  /**
   * Sets a new password from a reset link. With two-factor on, the link alone is not enough: a
   * code of the app or a recovery code too. Every session of the person ends, every other reset
   * link of theirs stops working, and the sign-in counts of their email start again.
   */
  async resetPassword(token: string, password: string, code: string | undefined): Promise<void> {
    const link = await this.db
      .selectFrom('person_tokens as t')
      .innerJoin('people as p', 'p.id', 't.person_id')
      .select(['p.id', 'p.email', 'p.totp_enabled_at'])
      .where('t.token_hash', '=', hashToken(token))
      .where('t.purpose', '=', 'reset_password')
      .where('t.used_at', 'is', null)
      .where('t.expires_at', '>', sql<Date>`now()`)
      .executeTakeFirst();
    if (!link) throw badLink('reset_password');
    checkPassword(password, link.email);
    if (link.totp_enabled_at) {
      if (!code?.trim()) {
        throw new ApiError('VALIDATION_ERROR', 'code is required: this account has two-factor authentication on; enter a code from your authenticator app, or a recovery code');
      }
      if (!(await checkSecondFactor(this.db, link.id, code))) throw new ApiError('VALIDATION_ERROR', WRONG_CODE);
    }
    const passwordHash = await hashPassword(password);
    await this.db.transaction().execute(async (trx) => {
      const personId = await this.useToken(token, 'reset_password', trx);
      await trx
        .updateTable('people')
        .set({ password_hash: passwordHash, email_verified_at: sql<Date>`coalesce(email_verified_at, now())` })
        .where('id', '=', personId)
        .execute();
      await endResetLinks(trx, personId);
      await revokeOtherSessions(trx, personId);
      await trx.deleteFrom('auth_counters').where('key', 'like', `${counterKey('pw', link.email)}%`).execute();
    });
  }

  /** A new password with the current one; other devices are signed out and reset links stop working. */
  async changePassword(personId: string, sessionId: string, current: string, next: string): Promise<void> {
    const person = await this.db.selectFrom('people').select('email').where('id', '=', personId).executeTakeFirstOrThrow();
    await this.checkCurrentPassword(personId, sessionId, current, 'currentPassword');
    checkPassword(next, person.email, 'newPassword');
    if (next === current) throw new ApiError('VALIDATION_ERROR', 'newPassword must differ from your current password');
    const passwordHash = await hashPassword(next);
    await this.db.transaction().execute(async (trx) => {
      await trx.updateTable('people').set({ password_hash: passwordHash }).where('id', '=', personId).execute();
      await endResetLinks(trx, personId);
      await revokeOtherSessions(trx, personId, sessionId);
    });
  }

  /**
   * The signed-in person's password, asked again before a change that needs it. Each attempt
   * counts, before the check, towards CURRENT_PASSWORD_PER_PERSON; the wrong one that reaches it
   * ends the session that made it (`revokeSession`), and while the count is blocked no password is
   * checked. The right one clears the count.
   */
  private async checkCurrentPassword(personId: string, sessionId: string, password: string, field = 'password'): Promise<void> {
    const key = counterKey('reauth', personId);
    const { blockedUntil, last } = await this.counters.hit(key, CURRENT_PASSWORD_PER_PERSON);
    if (blockedUntil && !last) throw new LockedError(blockedUntil, 'current password');
    const person = await this.db.selectFrom('people').select('password_hash').where('id', '=', personId).executeTakeFirstOrThrow();
    if (await verifyPassword(person.password_hash, password)) {
      await this.counters.clear(key);
      return;
    }
    if (blockedUntil) {
      await revokeSession(this.db, personId, sessionId);
      throw new LockedError(blockedUntil, 'current password');
    }
    throw new ApiError('VALIDATION_ERROR', `${field} is not your current password`);
  }

  /** Starts two-factor setup: a new secret, not in force until `enableTotp` proves a code from it. */
  async setupTotp(personId: string, email: string): Promise<{ secret: string; otpauthUrl: string }> {
    const person = await this.db.selectFrom('people').select('totp_enabled_at').where('id', '=', personId).executeTakeFirstOrThrow();
    if (person.totp_enabled_at) throw new ApiError('CONFLICT', 'Two-factor authentication is already on; turn it off first to change the app');
    const secret = generateTotpSecret();
    await this.db.updateTable('people').set({ totp_secret: secret }).where('id', '=', personId).execute();
    return { secret, otpauthUrl: generateURI({ issuer: 'Vouch', label: email, secret }) };
  }

  /**
   * Turns two-factor on: the password again (a stolen session must not lock the owner out with
   * an app of its own) and a code of the new secret. Every other session ends; the answer carries
   * the recovery codes, shown this once.
   */
  async enableTotp(personId: string, sessionId: string, password: string, code: string): Promise<string[]> {
    await this.checkCurrentPassword(personId, sessionId, password);
    const person = await this.db.selectFrom('people').select(['totp_secret', 'totp_enabled_at']).where('id', '=', personId).executeTakeFirstOrThrow();
    if (person.totp_enabled_at) throw new ApiError('CONFLICT', 'Two-factor authentication is already on');
    if (!person.totp_secret) throw new ApiError('BAD_REQUEST', 'Start the setup first, then enter a code from the app');
    const step = await totpStep(person.totp_secret, code);
    if (step === undefined) throw new ApiError('VALIDATION_ERROR', 'code is not right: enter the current 6-digit code from your authenticator app');
    await this.db
      .updateTable('people')
      .set({ totp_enabled_at: sql<Date>`now()`, totp_last_step: step, totp_failures: 0, totp_locked_until: null })
      .where('id', '=', personId)
      .execute();
    await revokeOtherSessions(this.db, personId, sessionId);
    return replaceRecoveryCodes(this.db, personId);
  }

  /** New recovery codes (the old ones stop working) with the password and a current code. */
  async regenerateRecoveryCodes(personId: string, sessionId: string, password: string, code: string): Promise<string[]> {
    await this.checkCurrentPassword(personId, sessionId, password);
    if (!(await checkSecondFactor(this.db, personId, code))) throw new ApiError('VALIDATION_ERROR', WRONG_CODE);
    return replaceRecoveryCodes(this.db, personId);
  }

  /** Turns two-factor off with the password and a code; every other session ends, as when it is turned on. */
  async disableTotp(personId: string, sessionId: string, password: string, code: string): Promise<void> {
    const person = await this.db.selectFrom('people').select(['totp_enabled_at']).where('id', '=', personId).executeTakeFirstOrThrow();
    if (!person.totp_enabled_at) throw new ApiError('CONFLICT', 'Two-factor authentication is already off');
    await this.checkCurrentPassword(personId, sessionId, password);
    if (!(await checkSecondFactor(this.db, personId, code))) throw new ApiError('VALIDATION_ERROR', WRONG_CODE);
    await this.db.transaction().execute(async (trx) => {
      await turnOffSecondFactor(trx, personId);
      // Whatever device signed in with the second factor signs in again without it.
      await revokeOtherSessions(trx, personId, sessionId);
    });
  }
}

/** The answer to a mailed link that is unknown, used or expired. */
function badLink(purpose: 'verify_email' | 'reset_password'): ApiError {
  const what = purpose === 'verify_email' ? 'Ask for a new verification email' : 'Ask for a new reset link';
  return new ApiError('BAD_REQUEST', `This link is invalid, already used or expired. ${what}.`);
}

/** Every reset link of a person still unused stops working (their password just changed). */
async function endResetLinks(db: Kysely<DB>, personId: string): Promise<void> {
  await db
    .updateTable('person_tokens')
    .set({ used_at: sql<Date>`now()` })
    .where('person_id', '=', personId)
    .where('purpose', '=', 'reset_password')
    .where('used_at', 'is', null)
    .execute();
}
