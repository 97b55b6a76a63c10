import { maskEmail } from '../../console/invitations.js';
import { maskIdentifier } from '../../identities/lookups.js';

/**
 * The webhook delivery log shows an event body with its people's numbers masked, for every role:
 * the verification pages show identity numbers masked to everybody too, and the log is for
 * seeing what was sent and how the receiver answered, not for reading a person's BVN, phone,
 * birth date or email. The customer's receiver got the body whole; the record itself is read on
 * its verification page (or with GET), where the view is logged per verification.
 */

type Masker = (value: string) => string;

const maskDate: Masker = (value) => value.replace(/\d/g, '*');
const maskContact: Masker = (value) => (value.includes('@') ? maskEmail(value) : maskIdentifier(value));

/** Which string fields are masked, by key (the records' fields at any depth: applicant, neighbor, guarantor, employer). */
function maskerOf(key: string): Masker | undefined {
  const name = key.toLowerCase();
  if (name === 'idnumber' || name === 'bvn' || name === 'nin' || name.endsWith('phone')) return maskIdentifier;
  if (name === 'birthdate' || name === 'dob' || name === 'dateofbirth') return maskDate;
  if (name.endsWith('email')) return maskEmail;
  if (name === 'attestatorcontact') return maskContact;
  return undefined;
}

export interface MaskedBody {
  body: unknown;
  /** Masks any of the values masked in the body where they appear in other text (a receiver that echoed the body). */
  scrub(text: string | null): string | null;
}

/** The body with its personal numbers masked, and a scrubber for text that may repeat them. */
export function maskEventBody(body: unknown): MaskedBody {
  const replaced = new Map<string, string>();
  const walk = (value: unknown, masker: Masker | undefined): unknown => {
    if (typeof value === 'string') {
      if (!masker || value === '') return value;
      const masked = masker(value);
      if (value.length >= 4) replaced.set(value, masked);
      return masked;
    }
    if (Array.isArray(value)) return value.map((item) => walk(item, masker));
    if (value && typeof value === 'object') {
      return Object.fromEntries(Object.entries(value).map(([key, item]) => [key, walk(item, maskerOf(key))]));
    }
    return value;
  };
  const masked = walk(body, undefined);
  // Longest first: a phone that contains a shorter masked value is replaced whole.
  const pairs = [...replaced].sort((a, b) => b[0].length - a[0].length);
  return {
    body: masked,
    scrub: (text) => (text === null ? null : pairs.reduce((out, [raw, mask]) => out.split(raw).join(mask), text)),
  };
}
