import { createHash, randomBytes, randomInt } from 'node:crypto';

/**
 * The end user's bearer capabilities (docs/sessions.md, "Tokens"). Each is 32 random bytes
 * (256 bits); only its SHA-256 is stored, so a database reader cannot act for an end user.
 */

/** 32 random bytes, base64url: 43 characters. The hosted link's token. */
const URL_TOKEN = /^[A-Za-z0-9_-]{43}$/;
/** The web SDK's client secret: the same randomness behind a prefix that says what it is. */
export const CLIENT_SECRET_PREFIX = 'vcs_';
const CLIENT_SECRET = /^vcs_[A-Za-z0-9_-]{43}$/;

export type TokenGenerator = () => string;

export const randomUrlToken: TokenGenerator = () => randomBytes(32).toString('base64url');
export const randomClientSecret: TokenGenerator = () => `${CLIENT_SECRET_PREFIX}${randomBytes(32).toString('base64url')}`;

/** Whether a path segment has the shape of one of the tokens (anything else is unknown without a query). */
export function isTokenShaped(token: string): boolean {
  return URL_TOKEN.test(token) || CLIENT_SECRET.test(token);
}

export function hashToken(token: string): string {
  return createHash('sha256').update(token).digest('hex');
}

/**
 * Handoff codes: 10 characters of an alphabet without look-alikes (no 0/o, 1/l/i), 31 symbols:
 * about 49.5 bits. A code lives 15 minutes and `GET /v/:code` is limited per address, so
 * guessing a live one is out of reach (docs/sessions.md, "Cross-device handoff").
 */
export const HANDOFF_ALPHABET = 'abcdefghjkmnpqrstuvwxyz23456789';
export const HANDOFF_CODE_LENGTH = 10;
const HANDOFF_CODE = new RegExp(`^[${HANDOFF_ALPHABET}]{${HANDOFF_CODE_LENGTH}}$`);

export const randomHandoffCode: TokenGenerator = () => {
  let code = '';
  for (let i = 0; i < HANDOFF_CODE_LENGTH; i++) code += HANDOFF_ALPHABET[randomInt(HANDOFF_ALPHABET.length)];
  return code;
};

export function isHandoffCode(code: string): boolean {
  return HANDOFF_CODE.test(code);
}

/** Public ids: `ses_` and 20 random lower-case hex digits (80 bits; ids are not capabilities). */
export const randomSessionId: TokenGenerator = () => `ses_${randomBytes(10).toString('hex')}`;
export const SESSION_ID = /^ses_[0-9a-f]{20}$/;

/** Attempt ids: bound to their session in the database; random so one attempt cannot name another. */
export const randomAttemptId: TokenGenerator = () => `att_${randomBytes(12).toString('hex')}`;
export const ATTEMPT_ID = /^att_[0-9a-f]{24}$/;
