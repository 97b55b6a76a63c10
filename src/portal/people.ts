import { randomUUID } from 'node:crypto';
import { hash, verify } from '@node-rs/argon2';
import type { Kysely, Transaction } from 'kysely';
import type { DB } from '../platform/db/schema.js';

/** argon2id (the library's default algorithm) with OWASP's minimum parameters: 19 MiB, 2 passes. */
const ARGON2 = { memoryCost: 19_456, timeCost: 2, parallelism: 1 } as const;

export const MIN_PASSWORD_LENGTH = 10;

export function hashPassword(password: string): Promise<string> {
  return hash(password, ARGON2);
}

export async function verifyPassword(passwordHash: string, password: string): Promise<boolean> {
  try {
    return await verify(passwordHash, password);
  } catch {
    return false;
  }
}

/** Whether a (normalised) address has the shape of one: something@domain.tld, no spaces. */
export function isEmailAddress(email: string): boolean {
  return /^[^\s@]+@[^\s@]+\.[^\s@]+$/.test(email);
}

export function normaliseEmail(email: string): string {
  return email.trim().toLowerCase();
}

export interface NewPerson {
  email: string;
  name: string;
  password: string;
  /** Mark the address as verified now (operators made on the command line, tests). */
  verified?: boolean;
}

/** Inserts a person; the caller maps a unique violation on `email` to its own message. */
export async function insertPerson(db: Kysely<DB> | Transaction<DB>, input: NewPerson): Promise<string> {
  const id = randomUUID();
  await db
    .insertInto('people')
    .values({
      id,
      email: normaliseEmail(input.email),
      name: input.name.trim(),
      password_hash: await hashPassword(input.password),
      email_verified_at: input.verified ? new Date() : null,
    })
    .execute();
  return id;
}
