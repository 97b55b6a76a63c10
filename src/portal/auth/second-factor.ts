import { createHash, randomInt } from 'node:crypto';
import { sql, type Kysely } from 'kysely';
import { verify as verifyTotp } from 'otplib';
import type { DB } from '../../platform/db/schema.js';
import { ApiError } from '../../platform/errors.js';
import { secondsUntil } from './throttle.js';

export interface TotpRecoveryCodesTable {
  person_id: string;
  code_hash: string;
  created_at: Date;
  used_at: Date | null;
}

declare module '../../platform/db/schema.js' {
  interface DB {
    totp_recovery_codes: TotpRecoveryCodesTable;
  }
}

/** Wrong codes in a row that lock the second step; each further run of as many doubles the lock. */
export const CODE_FAILURES_PER_LOCK = 5;
export const CODE_LOCK_MS = 15 * 60 * 1000;
/** The longest lock: 15 minutes doubled six times (16 hours). */
const MAX_LOCK_DOUBLINGS = 6;

export const RECOVERY_CODE_COUNT = 10;
/** Letters and digits that cannot be misread for one another (no 0/o, 1/l/i). */
const RECOVERY_ALPHABET = 'abcdefghjkmnpqrstuvwxyz23456789';

/** 429 for a sign-in that must wait; the route sends `retryAfter` (seconds) as Retry-After. */
export class LockedError extends ApiError {
  readonly retryAfter: number;
  constructor(until: Date, what: 'password' | 'code' | 'current password') {
    const seconds = secondsUntil(until);
    const minutes = Math.ceil(seconds / 60);
    const at = until.toISOString().slice(11, 16);
    const messages = {
      password: `Too many wrong attempts: signing in to this account from your network is paused for ${minutes} more minute(s), until ${at} UTC. Try again then, or reset your password.`,
      code: `Too many wrong codes: the two-factor step of this account is locked for ${minutes} more minute(s), until ${at} UTC. Then sign in again with your password and a code, or a recovery code.`,
      'current password': `Too many wrong passwords: changes that need your password are paused on every device for ${minutes} more minute(s), until ${at} UTC, and the device that entered the last one is signed out. Forgot it? Sign out and reset your password.`,
    };
    super('RATE_LIMITED', messages[what]);
    this.retryAfter = seconds;
  }
}

/** Ten new recovery codes, `xxxxx-xxxxx` (about 49 bits each), as the person is shown them once. */
export function newRecoveryCodes(): string[] {
  return Array.from({ length: RECOVERY_CODE_COUNT }, () => {
    const chars = Array.from({ length: 10 }, () => RECOVERY_ALPHABET[randomInt(RECOVERY_ALPHABET.length)]).join('');
    return `${chars.slice(0, 5)}-${chars.slice(5)}`;
  });
}

function recoveryHash(code: string): string {
  return createHash('sha256').update(code.toLowerCase().replace(/[\s-]/g, '')).digest('hex');
}

/** Replaces a person's recovery codes with new ones (stored hashed); returns them to show once. */
export async function replaceRecoveryCodes(db: Kysely<DB>, personId: string): Promise<string[]> {
  const codes = newRecoveryCodes();
  await db.deleteFrom('totp_recovery_codes').where('person_id', '=', personId).execute();
  await db
    .insertInto('totp_recovery_codes')
    .values(codes.map((code) => ({ person_id: personId, code_hash: recoveryHash(code), created_at: new Date(), used_at: null })))
    .execute();
  return codes;
}

/**
 * Turns a person's second factor off: the secret, its lock and its recovery codes go. Shared by
 * the person turning it off (`disableTotp`) and the administrator clearing a lost one
 * (`resetSecondFactor`); call it in the transaction that also ends their sessions. Returns how many
 * of the recovery codes had not been used.
 */
export async function turnOffSecondFactor(db: Kysely<DB>, personId: string): Promise<number> {
  await db
    .updateTable('people')
    .set({ totp_secret: null, totp_enabled_at: null, totp_last_step: null, totp_failures: 0, totp_locked_until: null })
    .where('id', '=', personId)
    .execute();
  const codes = await db.deleteFrom('totp_recovery_codes').where('person_id', '=', personId).returning('used_at').execute();
  return codes.filter((code) => code.used_at === null).length;
}

/**
 * The time step of a code of the current 30-second step, or of the one before or after (clock
 * drift), later than `afterStep`; undefined when it does not match.
 */
export async function totpStep(secret: string, code: string, afterStep?: number | null): Promise<number | undefined> {
  const token = code.replace(/\s/g, '');
  if (!/^\d{6}$/.test(token)) return undefined;
  try {
    const result = await verifyTotp({ secret, token, epochTolerance: 30, ...(afterStep != null ? { afterTimeStep: afterStep } : {}) });
    // A TOTP result names the step it matched (the HOTP half of the union does not).
    return result.valid && 'timeStep' in result ? result.timeStep : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Checks a second factor: a TOTP code of a step not used before, or an unused recovery code
 * (used up by this). Every attempt is counted before it is checked, in one UPDATE that refuses a
 * locked person, so parallel guesses cannot slip past the count; a right code clears the count
 * (a password never does). The attempt that makes CODE_FAILURES_PER_LOCK in a row locks the
 * second step; if it is wrong it answers LockedError at once. Returns false for a wrong code.
 */
export async function checkSecondFactor(db: Kysely<DB>, personId: string, code: string): Promise<boolean> {
  const claimed = await db
    .updateTable('people')
    .set({
      totp_failures: sql<number>`totp_failures + 1`,
      totp_locked_until: sql<Date | null>`case when (totp_failures + 1) % ${CODE_FAILURES_PER_LOCK}::int = 0
        then now() + ${CODE_LOCK_MS} * power(2, least((totp_failures + 1) / ${CODE_FAILURES_PER_LOCK}::int - 1, ${MAX_LOCK_DOUBLINGS}::int)) * interval '1 millisecond'
        else totp_locked_until end`,
    })
    .where('id', '=', personId)
    .where('totp_enabled_at', 'is not', null)
    .where((eb) => eb.or([eb('totp_locked_until', 'is', null), eb('totp_locked_until', '<=', sql<Date>`now()`)]))
    .returning(['totp_secret', 'totp_last_step', 'totp_locked_until'])
    .executeTakeFirst();
  if (!claimed) {
    const person = await db.selectFrom('people').select(['totp_enabled_at', 'totp_locked_until']).where('id', '=', personId).executeTakeFirstOrThrow();
    if (!person.totp_enabled_at) throw new ApiError('BAD_REQUEST', 'Two-factor authentication is not on for this account');
    throw new LockedError(person.totp_locked_until ?? new Date(Date.now() + CODE_LOCK_MS), 'code');
  }
  if (await useCode(db, personId, claimed.totp_secret ?? '', claimed.totp_last_step, code)) {
    await db.updateTable('people').set({ totp_failures: 0, totp_locked_until: null }).where('id', '=', personId).execute();
    return true;
  }
  if (claimed.totp_locked_until && claimed.totp_locked_until.getTime() > Date.now()) throw new LockedError(claimed.totp_locked_until, 'code');
  return false;
}

async function useCode(db: Kysely<DB>, personId: string, secret: string, lastStep: number | null, code: string): Promise<boolean> {
  const step = await totpStep(secret, code, lastStep);
  if (step !== undefined) return recordStep(db, personId, step);
  const normalised = code.toLowerCase().replace(/[\s-]/g, '');
  if (normalised.length !== 10) return false;
  const used = await db
    .updateTable('totp_recovery_codes')
    .set({ used_at: sql<Date>`now()` })
    .where('person_id', '=', personId)
    .where('code_hash', '=', recoveryHash(normalised))
    .where('used_at', 'is', null)
    .executeTakeFirst();
  return used.numUpdatedRows > 0n;
}

/**
 * Records the step of an accepted code; false when it (or a later one) was already used. One
 * UPDATE, so two requests with the same code cannot both pass.
 */
export async function recordStep(db: Kysely<DB>, personId: string, step: number): Promise<boolean> {
  const result = await db
    .updateTable('people')
    .set({ totp_last_step: step })
    .where('id', '=', personId)
    .where((eb) => eb.or([eb('totp_last_step', 'is', null), eb('totp_last_step', '<', step)]))
    .executeTakeFirst();
  return result.numUpdatedRows > 0n;
}

/** How many unused recovery codes a person has left. */
export async function recoveryCodesLeft(db: Kysely<DB>, personId: string): Promise<number> {
  const row = await db
    .selectFrom('totp_recovery_codes')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .where('person_id', '=', personId)
    .where('used_at', 'is', null)
    .executeTakeFirstOrThrow();
  return Number(row.n);
}
