import { createHash, randomBytes } from 'node:crypto';
import type { Mode } from './db/schema.js';

const SECRET_FORMAT = /^sk_(test|live)_[A-Za-z0-9_-]{43}$/;

export type SecretGenerator = (mode: Mode) => string;

/** `sk_test_…` / `sk_live_…` followed by 32 random bytes, base64url. */
export const generateSecret: SecretGenerator = (mode) => `sk_${mode}_${randomBytes(32).toString('base64url')}`;

export function hashSecret(secret: string): string {
  return createHash('sha256').update(secret).digest('hex');
}

/** What a person may see of a secret later: its prefix and last four characters. */
export function secretHint(secret: string): string {
  return `${secret.slice(0, 8)}…${secret.slice(-4)}`;
}

export function parseSecret(secret: string): { mode: Mode } | undefined {
  const match = SECRET_FORMAT.exec(secret);
  return match ? { mode: match[1] as Mode } : undefined;
}
