import type { Kysely } from 'kysely';
import { maskEmail } from '../../console/invitations.js';
import { maskIdentifier } from '../../identities/lookups.js';
import { personalFieldOf, type PersonalField } from '../../identities/personal-fields.js';
import type { DB } from '../../platform/db/schema.js';

/**
 * The webhook delivery log shows an event body with its people's data masked, for every role:
 * the verification pages show identity numbers masked to everybody too, and the log is for
 * seeing what was sent and how the receiver answered, not for reading a person's licence number,
 * vNIN, phone, birth date or email, or looking at their face. The customer's receiver got the
 * body whole; the record itself is read on its verification page (or with GET), where the view
 * is logged per verification.
 *
 * A value is masked for what it is: by the field it is in (personal-fields.ts, one list for the
 * whole portal), by its shape wherever it is (an image, an email address, a number as long as a
 * BVN, NIN or phone), and, once masked, wherever else it is repeated: in another field of the
 * body (metadata, a reference), in the receiver's answers and in the attempts' errors.
 */

type Masker = (value: string) => string;

/** What the log shows instead of an image: that there was one and its size, never its bytes. */
export function imagePlaceholder(characters: number): string {
  return `[image not shown: ${characters} characters]`;
}

const maskImage: Masker = (value) => imagePlaceholder(value.length);
const maskDate: Masker = (value) => value.replace(/\d/g, '*');
const maskContact: Masker = (value) => (value.includes('@') ? maskEmail(value) : maskIdentifier(value));

const BY_FIELD: Record<PersonalField, Masker> = {
  identityNumber: maskIdentifier,
  phone: maskIdentifier,
  email: maskEmail,
  contact: maskContact,
  birthDate: maskDate,
  photo: maskImage,
  ipAddress: maskIdentifier,
};

/** JPEG, PNG, GIF and WebP files as base64 begin so. */
const IMAGE_BASE64_START = String.raw`(?:\/9j\/|iVBORw0KGgo|R0lGOD[lh]|UklGR)`;
const BASE64_CHAR = '[A-Za-z0-9+/]';
const DATA_URL_START = String.raw`[Dd][Aa][Tt][Aa]:[Ii][Mm][Aa][Gg][Ee]\/`;
const IMAGE_VALUE = new RegExp(`^(?:${DATA_URL_START}|${IMAGE_BASE64_START}${BASE64_CHAR}{12}|${BASE64_CHAR}{200,}={0,2}$)`);
/** Images inside other text (an echoed body): a data URL, a base64 image, or any long base64 run. */
const IMAGE_IN_TEXT = new RegExp(`${DATA_URL_START}[\\w.+-]+;base64,${BASE64_CHAR}*={0,2}|${IMAGE_BASE64_START}${BASE64_CHAR}{8,}={0,2}|${BASE64_CHAR}{200,}={0,2}`, 'g');
const EMAIL_VALUE = /^[^\s@]+@[^\s@]+\.[^\s@]+$/;
/** 11 to 15 digits, however grouped: a BVN or NIN (11), a phone in local (11) or international form. */
const LONG_NUMBER_VALUE = /^\+?\d[\d -]{9,20}\d$/;

function maskerOfValue(value: string): Masker | undefined {
  if (IMAGE_VALUE.test(value)) return maskImage;
  if (EMAIL_VALUE.test(value)) return maskEmail;
  if (LONG_NUMBER_VALUE.test(value)) {
    const digits = value.replace(/\D/g, '').length;
    if (digits >= 11 && digits <= 15) return maskIdentifier;
  }
  return undefined;
}

const escapeRegExp = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/** The shortest value repeated elsewhere that is replaced there: shorter ones (a gender) would mask unrelated text. */
const MIN_REPEATED = 4;

export interface MaskedBody {
  body: unknown;
  /**
   * Masks the body's personal values where they appear in other text (a receiver that echoed the
   * body, an error naming a redirect with a number in it), an image in it, and a value cut off at
   * the end of the text (the answer's excerpt ends where it ends).
   */
  scrub(text: string | null): string | null;
}

/** The body with its people's data masked, and a scrubber for text that may repeat it. */
export function maskEventBody(body: unknown): MaskedBody {
  const masks = new Map<string, string>();
  const remember = (raw: string, masked: string) => {
    if (raw.length < MIN_REPEATED) return;
    masks.set(raw.toLowerCase(), masked);
    // A phone or number written with spaces or dashes is found written without them too.
    const compact = raw.replace(/[\s-]/g, '');
    if (compact !== raw && compact.length >= MIN_REPEATED && /\d/.test(compact)) masks.set(compact.toLowerCase(), masked);
  };
  const mask = (value: unknown, key: string | undefined): unknown => {
    const field = key === undefined ? undefined : personalFieldOf(key);
    // A JSON number where a string is usual (the spec allows a NIN as a number).
    if (typeof value === 'number' && (field === 'identityNumber' || field === 'phone')) value = String(value);
    if (typeof value === 'string') {
      const masker = value === '' ? undefined : (field && BY_FIELD[field]) ?? maskerOfValue(value);
      if (!masker) return value;
      const masked = masker(value);
      remember(value, masked);
      return masked;
    }
    if (Array.isArray(value)) return value.map((item) => mask(item, key));
    if (value && typeof value === 'object') return Object.fromEntries(Object.entries(value).map(([name, item]) => [name, mask(item, name)]));
    return value;
  };
  const masked = mask(body, undefined);

  // Longest first: a phone that contains a shorter masked value is replaced whole.
  const raws = [...masks.keys()].sort((a, b) => b.length - a.length);
  const repeated = raws.length > 0 ? new RegExp(raws.map(escapeRegExp).join('|'), 'gi') : undefined;
  const scrubWhole = (text: string): string => {
    const withoutImages = text.replace(IMAGE_IN_TEXT, (image) => imagePlaceholder(image.length));
    return repeated ? withoutImages.replace(repeated, (raw) => masks.get(raw.toLowerCase()) ?? raw) : withoutImages;
  };
  const scrubCut = (text: string): string => {
    const lower = text.toLowerCase();
    for (const raw of raws) {
      for (let length = Math.min(raw.length - 1, text.length); length >= MIN_REPEATED; length--) {
        if (lower.endsWith(raw.slice(0, length))) return text.slice(0, text.length - length) + masks.get(raw)!.slice(0, length);
      }
    }
    return text;
  };

  // Then the body's other strings: a number masked in one field is masked where it is repeated.
  const scrubBody = (value: unknown): unknown => {
    if (typeof value === 'string') return scrubWhole(value);
    if (Array.isArray(value)) return value.map(scrubBody);
    if (value && typeof value === 'object') return Object.fromEntries(Object.entries(value).map(([name, item]) => [name, scrubBody(item)]));
    return value;
  };
  return {
    body: scrubBody(masked),
    scrub: (text) => (text === null ? null : scrubCut(scrubWhole(text))),
  };
}

/** The masked bodies of these deliveries (each one read is decrypted), to scrub the text that may repeat them. */
export async function maskedBodiesOf(db: Kysely<DB>, ids: readonly number[]): Promise<Map<number, MaskedBody>> {
  if (ids.length === 0) return new Map();
  const rows = await db.selectFrom('webhook_deliveries').select(['id', 'payload']).where('id', 'in', ids).execute();
  return new Map(rows.map((row) => [Number(row.id), maskEventBody(row.payload)]));
}
