import { randomUUID } from 'node:crypto';
import { sql, type Kysely } from 'kysely';
import { generateSecret as generateTotpSecret, generateURI, verify as verifyTotp } from 'otplib';
import { AccountsService } from '../../accounts/service.js';
import type { DB } from '../../platform/db/schema.js';
import { ApiError } from '../../platform/errors.js';
import { audit } from '../audit.js';
import type { PeopleMail } from '../mail.js';
import { hashPassword, insertPerson, MIN_PASSWORD_LENGTH, normaliseEmail, verifyPassword } from '../people.js';
import { createSession, hashToken, newToken, revokeOtherSessions, SESSION_LIFETIME_MS } from '../sessions.js';

/** Consecutive wrong passwords before an account locks, and for how long. */
export const LOCKOUT_AFTER = 5;
export const LOCKOUT_MS = 15 * 60 * 1000;
const VERIFY_EMAIL_TTL_MS = 24 * 60 * 60 * 1000;
const RESET_TTL_MS = 60 * 60 * 1000;
/** A sign-in that still owes its TOTP code stays valid this long. */
const PENDING_TOTP_MS = 10 * 60 * 1000;

/** A hash to verify against when the email is unknown, so the answer takes as long either way. */
const DUMMY_HASH = hashPassword('not anybody’s password at all');

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

/** Sign-up, sign-in (with lockout and TOTP), email verification and password reset. */
export class AuthService {
  constructor(
    private readonly db: Kysely<DB>,
    private readonly mail: PeopleMail,
    private readonly publicUrl: string,
  ) {}

  /** A person and their new organization (not enabled, balance 0) whose owner they are; signed in. */
  async signUp(input: { name: string; email: string; password: string; organizationName: string }, client: Client) {
    const email = checkEmail(input.email);
    const name = input.name.trim();
    const organizationName = input.organizationName.trim();
    if (!name) throw new ApiError('VALIDATION_ERROR', 'name must not be empty');
    if (!organizationName) throw new ApiError('VALIDATION_ERROR', 'organizationName must not be empty');
    checkPassword(input.password, email);
    const taken = await this.db.selectFrom('people').select('id').where('email', '=', email).executeTakeFirst();
    if (taken) throw new ApiError('CONFLICT', 'An account with this email already exists: sign in, or reset your password');
    const orgId = randomUUID();
    const token = newToken();
    const { personId, mailId } = await this.db.transaction().execute(async (trx) => {
      await new AccountsService(this.db).insert(trx, orgId, { name: organizationName, email, enabled: false });
      const personId = await insertPerson(trx, { email, name, password: input.password });
      await trx.insertInto('memberships').values({ org_id: orgId, person_id: personId, role: 'owner' }).execute();
      await audit(trx, { orgId, actor: { kind: 'member', personId }, action: 'organization.created', after: { name: organizationName } });
      const mailId = await this.queueVerification(trx, personId, email, name, token);
      return { personId, mailId };
    });
    void this.mail.dispatch(mailId);
    const session = await createSession(this.db, { personId, ...client });
    return { personId, orgId, session };
  }

  private async queueVerification(trx: Kysely<DB>, personId: string, email: string, name: string, token: string): Promise<number> {
    await trx
      .insertInto('person_tokens')
      .values({ token_hash: hashToken(token), person_id: personId, purpose: 'verify_email', expires_at: new Date(Date.now() + VERIFY_EMAIL_TTL_MS) })
      .execute();
    return this.mail.queue(trx, {
      kind: 'verify_email',
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
    if (!row) {
      const what = purpose === 'verify_email' ? 'Ask for a new verification email' : 'Ask for a new reset link';
      throw new ApiError('BAD_REQUEST', `This link is invalid, already used or expired. ${what}.`);
    }
    return row.person_id;
  }

  /**
   * Checks the password. Wrong passwords count towards a lockout of LOCKOUT_MS after LOCKOUT_AFTER
   * in a row; a locked account answers 429 even to the right password until the lock ends.
   */
  async signIn(input: { email: string; password: string }, client: Client) {
    const email = normaliseEmail(input.email);
    const person = await this.db
      .selectFrom('people')
      .select(['id', 'password_hash', 'locked_until', 'totp_enabled_at'])
      .where('email', '=', email)
      .executeTakeFirst();
    if (!person) {
      await verifyPassword(await DUMMY_HASH, input.password);
      throw new ApiError('ACCESS_DENIED', 'Wrong email or password');
    }
    if (person.locked_until && person.locked_until.getTime() > Date.now()) throw new LockedError(person.locked_until);
    if (!(await verifyPassword(person.password_hash, input.password))) {
      await this.recordFailure(person.id);
      throw new ApiError('ACCESS_DENIED', 'Wrong email or password');
    }
    await this.db.updateTable('people').set({ failed_logins: 0, locked_until: null }).where('id', '=', person.id).execute();
    const totpRequired = person.totp_enabled_at !== null;
    const session = await createSession(this.db, {
      personId: person.id,
      pendingTotp: totpRequired,
      ...(totpRequired ? { lifetimeMs: PENDING_TOTP_MS } : {}),
      ...client,
    });
    return { session, totpRequired };
  }

  /**
   * Counts a wrong password or code; the LOCKOUT_AFTER-th in a row locks the account for
   * LOCKOUT_MS and answers 429 at once. One UPDATE, so concurrent attempts cannot skip the count.
   */
  private async recordFailure(personId: string): Promise<void> {
    const row = await this.db
      .updateTable('people')
      .set((eb) => ({
        failed_logins: sql<number>`case when failed_logins + 1 >= ${LOCKOUT_AFTER} then 0 else failed_logins + 1 end`,
        locked_until: eb
          .case()
          .when(sql<boolean>`failed_logins + 1 >= ${LOCKOUT_AFTER}`)
          .then(new Date(Date.now() + LOCKOUT_MS))
          .else(eb.ref('locked_until'))
          .end(),
      }))
      .where('id', '=', personId)
      .returning('locked_until')
      .executeTakeFirstOrThrow();
    if (row.locked_until && row.locked_until.getTime() > Date.now()) throw new LockedError(row.locked_until);
  }

  /**
   * The second step of a sign-in with TOTP: the pending session becomes a full one. Wrong codes
   * count towards the same lockout as wrong passwords, so the password alone cannot brute-force
   * the 6 digits.
   */
  async completeTotp(sessionId: string, personId: string, code: string): Promise<void> {
    const person = await this.db
      .selectFrom('people')
      .select(['totp_secret', 'totp_enabled_at', 'locked_until'])
      .where('id', '=', personId)
      .executeTakeFirstOrThrow();
    if (person.locked_until && person.locked_until.getTime() > Date.now()) throw new LockedError(person.locked_until);
    if (!person.totp_secret || !person.totp_enabled_at) throw new ApiError('BAD_REQUEST', 'Two-factor authentication is not enabled for this account');
    if (!(await totpMatches(person.totp_secret, code))) {
      await this.recordFailure(personId);
      throw new ApiError('ACCESS_DENIED', 'That code is not right: enter the current 6-digit code from your authenticator app');
    }
    await this.db.transaction().execute(async (trx) => {
      await trx.updateTable('people').set({ failed_logins: 0, locked_until: null }).where('id', '=', personId).execute();
      await trx
        .updateTable('portal_sessions')
        .set({ pending_totp: false, expires_at: new Date(Date.now() + SESSION_LIFETIME_MS) })
        .where('id', '=', sessionId)
        .execute();
    });
  }

  /** Mails a reset link when the address has an account; answers the same either way. */
  async forgotPassword(email: string): Promise<void> {
    const person = await this.db.selectFrom('people').select(['id', 'email', 'name']).where('email', '=', normaliseEmail(email)).executeTakeFirst();
    if (!person) return;
    const token = newToken();
    const mailId = await this.db.transaction().execute(async (trx) => {
      await trx
        .insertInto('person_tokens')
        .values({ token_hash: hashToken(token), person_id: person.id, purpose: 'reset_password', expires_at: new Date(Date.now() + RESET_TTL_MS) })
        .execute();
      return this.mail.queue(trx, {
        kind: 'reset_password',
        to: person.email,
        subject: 'Reset your Vouch password',
        text: `Hello ${person.name},\n\nSet a new password by opening this link (valid for one hour, once):\n\n${this.publicUrl}/reset-password?token=${token}\n\nIf you did not ask for this, ignore this message: your password stays as it is.\n`,
      });
    });
    void this.mail.dispatch(mailId);
  }

  /** Sets a new password from a reset link; every session of the person ends. */
  async resetPassword(token: string, password: string): Promise<void> {
    await this.db.transaction().execute(async (trx) => {
      const personId = await this.useToken(token, 'reset_password', trx);
      const person = await trx.selectFrom('people').select('email').where('id', '=', personId).executeTakeFirstOrThrow();
      checkPassword(password, person.email);
      await trx
        .updateTable('people')
        .set({ password_hash: await hashPassword(password), failed_logins: 0, locked_until: null, email_verified_at: sql<Date>`coalesce(email_verified_at, now())` })
        .where('id', '=', personId)
        .execute();
      await revokeOtherSessions(trx, personId);
    });
  }

  async changePassword(personId: string, sessionId: string, current: string, next: string): Promise<void> {
    const person = await this.db.selectFrom('people').select(['email', 'password_hash']).where('id', '=', personId).executeTakeFirstOrThrow();
    if (!(await verifyPassword(person.password_hash, current))) throw new ApiError('VALIDATION_ERROR', 'currentPassword is not your current password');
    checkPassword(next, person.email, 'newPassword');
    if (next === current) throw new ApiError('VALIDATION_ERROR', 'newPassword must differ from your current password');
    await this.db.updateTable('people').set({ password_hash: await hashPassword(next) }).where('id', '=', personId).execute();
    await revokeOtherSessions(this.db, personId, sessionId);
  }

  /** Starts two-factor setup: a new secret, not in force until `enableTotp` proves a code from it. */
  async setupTotp(personId: string, email: string): Promise<{ secret: string; otpauthUrl: string }> {
    const person = await this.db.selectFrom('people').select('totp_enabled_at').where('id', '=', personId).executeTakeFirstOrThrow();
    if (person.totp_enabled_at) throw new ApiError('CONFLICT', 'Two-factor authentication is already on; turn it off first to change the app');
    const secret = generateTotpSecret();
    await this.db.updateTable('people').set({ totp_secret: secret }).where('id', '=', personId).execute();
    return { secret, otpauthUrl: generateURI({ issuer: 'Vouch', label: email, secret }) };
  }

  async enableTotp(personId: string, code: string): Promise<void> {
    const person = await this.db.selectFrom('people').select(['totp_secret', 'totp_enabled_at']).where('id', '=', personId).executeTakeFirstOrThrow();
    if (person.totp_enabled_at) throw new ApiError('CONFLICT', 'Two-factor authentication is already on');
    if (!person.totp_secret) throw new ApiError('BAD_REQUEST', 'Start the setup first, then enter a code from the app');
    if (!(await totpMatches(person.totp_secret, code))) throw new ApiError('VALIDATION_ERROR', 'code is not right: enter the current 6-digit code from your authenticator app');
    await this.db.updateTable('people').set({ totp_enabled_at: sql<Date>`now()` }).where('id', '=', personId).execute();
  }

  async disableTotp(personId: string, password: string, code: string): Promise<void> {
    const person = await this.db.selectFrom('people').select(['password_hash', 'totp_secret', 'totp_enabled_at']).where('id', '=', personId).executeTakeFirstOrThrow();
    if (!person.totp_enabled_at || !person.totp_secret) throw new ApiError('CONFLICT', 'Two-factor authentication is already off');
    if (!(await verifyPassword(person.password_hash, password))) throw new ApiError('VALIDATION_ERROR', 'password is not your current password');
    if (!(await totpMatches(person.totp_secret, code))) throw new ApiError('VALIDATION_ERROR', 'code is not right: enter the current 6-digit code from your authenticator app');
    await this.db.updateTable('people').set({ totp_secret: null, totp_enabled_at: null }).where('id', '=', personId).execute();
  }
}

/** A code of the current 30-second step, or of the one before or after (clock drift). */
async function totpMatches(secret: string, code: string): Promise<boolean> {
  if (!/^\d{6}$/.test(code.trim())) return false;
  try {
    const result = await verifyTotp({ secret, token: code.trim(), epochTolerance: 30 });
    return result.valid;
  } catch {
    return false;
  }
}

/** 429 for a locked account; the route sends `retryAfter` (seconds) as the Retry-After header. */
export class LockedError extends ApiError {
  readonly retryAfter: number;
  constructor(until: Date) {
    const seconds = Math.max(1, Math.ceil((until.getTime() - Date.now()) / 1000));
    const minutes = Math.ceil(seconds / 60);
    const at = until.toISOString().slice(11, 16);
    super('RATE_LIMITED', `Too many wrong attempts: this account is locked for ${minutes} more minute(s), until ${at} UTC. Try again then, or reset your password.`);
    this.retryAfter = seconds;
  }
}
