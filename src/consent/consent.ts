import type { FastifyRequest } from 'fastify';
import type { Kysely } from 'kysely';
import { Type, type Static } from 'typebox';
import type { DB } from '../platform/db/schema.js';
import { ApiError } from '../platform/errors.js';

/**
 * Lawful basis (issue 12, point 4; docs/data-protection.md, "Consent"): the consent a customer
 * says it obtained from the person before a check. Optional on every identity lookup and
 * workflow creation; an organization can make it required (`organizations.consent_required`).
 */

/** How the consent was obtained. */
export const CONSENT_CHANNELS = ['web', 'mobile', 'in_person', 'phone', 'paper', 'other'] as const;
export type ConsentChannel = (typeof CONSENT_CHANNELS)[number];

/** An `obtainedAt` may be this far ahead of the server's clock (the customer's clock may run fast). */
export const CONSENT_CLOCK_SKEW_MS = 5 * 60_000;
/** The longest consent reference kept. */
export const MAX_CONSENT_REFERENCE = 200;
/** An `obtainedAt` before this is a mistake (a date typed as 0001-01-01, a seconds/ms confusion). */
const EARLIEST = Date.UTC(2000, 0, 1);

const ISO_DATE_TIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d{1,9})?)?(Z|[+-]\d{2}:?\d{2})$/i;

/** The request's `consent` object. Its values are checked by `checkConsent` (clear messages), not by the schema. */
export const ConsentBody = Type.Object(
  {
    reference: Type.Optional(Type.String({ description: `Your record of the consent (a form id, a recording reference), at most ${MAX_CONSENT_REFERENCE} characters. Stored encrypted.` })),
    obtainedAt: Type.Optional(Type.String({ description: 'When the person gave consent: an ISO 8601 date-time with a time zone, e.g. 2024-05-01T09:30:00Z; not in the future (5 minutes of clock skew allowed)' })),
    channel: Type.Optional(Type.String({ description: `How it was obtained: one of ${CONSENT_CHANNELS.join(', ')}` })),
  },
  {
    description:
      "The person's consent to this check (lawful basis): reference, obtainedAt and channel, all three required when the object is sent. Optional unless the organization requires consent, then a request without it is 400.",
  },
);
export type ConsentInput = Static<typeof ConsentBody>;

/** A checked consent, as stored and returned. */
export interface Consent {
  reference: string;
  obtainedAt: string;
  channel: ConsentChannel;
}

/** Where the consent came from, for the messages: a body's `consent` object or the identity lookups' headers. */
type Source = 'body' | 'headers';

export const CONSENT_HEADERS = {
  reference: 'X-Consent-Reference',
  obtainedAt: 'X-Consent-Obtained-At',
  channel: 'X-Consent-Channel',
} as const;

function label(source: Source, field: keyof typeof CONSENT_HEADERS): string {
  return source === 'body' ? `consent.${field}` : CONSENT_HEADERS[field];
}

/**
 * Checks a consent: undefined when none was sent; the problems found otherwise (each names the
 * field). `now` is the server's clock.
 */
export function checkConsent(raw: unknown, now: Date, source: Source = 'body'): { consent?: Consent; problems: string[] } {
  if (raw === undefined || raw === null) return { problems: [] };
  if (typeof raw !== 'object' || Array.isArray(raw)) return { problems: ['consent must be an object with reference, obtainedAt and channel'] };
  const input = raw as Record<string, unknown>;
  const problems: string[] = [];
  const text = (value: unknown) => (typeof value === 'string' ? value.trim() : typeof value === 'number' ? String(value) : undefined);

  const reference = text(input.reference);
  if (!reference) problems.push(`${label(source, 'reference')} is required`);
  else if (reference.length > MAX_CONSENT_REFERENCE) problems.push(`${label(source, 'reference')} must be at most ${MAX_CONSENT_REFERENCE} characters`);
  else if (/[\u0000-\u001f\u007f]/.test(reference)) problems.push(`${label(source, 'reference')} must not contain control characters`);

  const obtainedRaw = text(input.obtainedAt);
  let obtainedAt: string | undefined;
  if (!obtainedRaw) problems.push(`${label(source, 'obtainedAt')} is required`);
  else {
    const time = ISO_DATE_TIME.test(obtainedRaw) ? Date.parse(obtainedRaw) : Number.NaN;
    if (Number.isNaN(time)) {
      problems.push(`${label(source, 'obtainedAt')} must be an ISO 8601 date-time with a time zone, e.g. 2024-05-01T09:30:00Z`);
    } else if (time > now.getTime() + CONSENT_CLOCK_SKEW_MS) {
      problems.push(`${label(source, 'obtainedAt')} must not be in the future`);
    } else if (time < EARLIEST) {
      problems.push(`${label(source, 'obtainedAt')} must be a date-time after 2000-01-01`);
    } else obtainedAt = new Date(time).toISOString();
  }

  const channelRaw = text(input.channel);
  const channel = CONSENT_CHANNELS.find((option) => option === channelRaw?.toLowerCase());
  if (!channelRaw) problems.push(`${label(source, 'channel')} is required`);
  else if (!channel) problems.push(`${label(source, 'channel')} must be one of ${CONSENT_CHANNELS.join(', ')}`);

  if (problems.length > 0 || !reference || !obtainedAt || !channel) return { problems };
  return { consent: { reference, obtainedAt, channel }, problems };
}

/** The message of a request without consent when the organization requires it. */
export function consentMissing(source: 'workflow' | 'lookup'): string {
  return source === 'workflow'
    ? 'consent is required for this organization: send consent with reference, obtainedAt and channel'
    : `consent is required for this organization: send consent with reference, obtainedAt and channel in the body, or the ${Object.values(CONSENT_HEADERS).join(', ')} headers`;
}

/**
 * A workflow creation's consent: its problems added to the creation's (one 400 names them all),
 * and a missing one when `required`.
 */
export function workflowConsent(raw: unknown, required: boolean, problems: { add(message: string): void }): Consent | undefined {
  // The wall clock, not a workflow's (tests move those): consent is judged against the real time.
  const checked = checkConsent(raw, new Date());
  for (const problem of checked.problems) problems.add(problem);
  if (required && raw == null) problems.add(consentMissing('workflow'));
  return checked.consent;
}

function header(request: FastifyRequest, name: string): string | undefined {
  const value = request.headers[name];
  return Array.isArray(value) ? value.join(',') : value;
}

/** The consent headers as Node names them (lower case). */
const CONSENT_HEADER_KEYS = {
  reference: CONSENT_HEADERS.reference.toLowerCase(),
  obtainedAt: CONSENT_HEADERS.obtainedAt.toLowerCase(),
  channel: CONSENT_HEADERS.channel.toLowerCase(),
};

/**
 * An identity lookup's consent: the body's `consent` object (POST lookups), or else the
 * `X-Consent-*` headers (any lookup; the only way for the GET TIN lookup and a multipart
 * biometrics form). Throws 400 in the identity family's style (B) when it is malformed, or
 * missing while the organization requires it.
 */
export function lookupConsent(request: FastifyRequest): Consent | undefined {
  const body = request.body as { consent?: unknown } | undefined;
  const fromBody = body && typeof body === 'object' && !Buffer.isBuffer(body) ? body.consent : undefined;
  let checked: { consent?: Consent; problems: string[] };
  if (fromBody !== undefined && fromBody !== null) checked = checkConsent(fromBody, new Date(), 'body');
  else {
    // Read on every identity lookup: the three headers by their lower-case names, no intermediate arrays.
    const values = {
      reference: header(request, CONSENT_HEADER_KEYS.reference),
      obtainedAt: header(request, CONSENT_HEADER_KEYS.obtainedAt),
      channel: header(request, CONSENT_HEADER_KEYS.channel),
    } satisfies Record<keyof typeof CONSENT_HEADERS, string | undefined>;
    const any = values.reference !== undefined || values.obtainedAt !== undefined || values.channel !== undefined;
    checked = any ? checkConsent(values, new Date(), 'headers') : { problems: [] };
  }
  if (checked.problems.length > 0) throw new ApiError('VALIDATION_ERROR', checked.problems.join('; '));
  if (!checked.consent && request.auth.consentRequired) throw new ApiError('VALIDATION_ERROR', consentMissing('lookup'));
  return checked.consent;
}

/** A consent as the verification tables' three columns (null when none was given). */
export function consentColumns(consent: Consent | undefined) {
  return {
    consent_reference: consent?.reference ?? null,
    consent_obtained_at: consent ? new Date(consent.obtainedAt) : null,
    consent_channel: consent?.channel ?? null,
  };
}

/** The stored columns back as a consent, or null when the row has none. */
export function consentOf(row: {
  consent_reference?: string | null;
  consent_obtained_at?: Date | string | null;
  consent_channel?: string | null;
}): Consent | null {
  if (!row.consent_reference || !row.consent_obtained_at || !row.consent_channel) return null;
  return { reference: row.consent_reference, obtainedAt: new Date(row.consent_obtained_at).toISOString(), channel: row.consent_channel as ConsentChannel };
}

/** Records a lookup's consent beside its usage row (only called when the request carried one). */
export async function recordLookupConsent(db: Kysely<DB>, orgId: string, usageId: number, consent: Consent): Promise<void> {
  await db.insertInto('lookup_consents').values({ usage_id: usageId, org_id: orgId, ...consentColumns(consent) } as never).execute();
}

/**
 * The consents an organization recorded with its identity lookups, by usage row id (for the
 * portal's lookups list and the subject export). `usageIds` at most a page.
 */
export async function lookupConsents(db: Kysely<DB>, orgId: string, usageIds: readonly number[]): Promise<Map<number, Consent>> {
  if (usageIds.length === 0) return new Map();
  const rows = await db
    .selectFrom('lookup_consents')
    .select(['usage_id', 'consent_reference', 'consent_obtained_at', 'consent_channel'])
    .where('org_id', '=', orgId)
    .where('usage_id', 'in', [...usageIds])
    .execute();
  return new Map(rows.map((row) => [Number(row.usage_id), consentOf(row)!]));
}

/** Consent as the API and the portal show it (OpenAPI). */
export const ConsentRecord = Type.Object(
  {
    reference: Type.String(),
    obtainedAt: Type.String({ format: 'date-time' }),
    channel: Type.Union(CONSENT_CHANNELS.map((channel) => Type.Literal(channel))),
  },
  { description: 'The consent sent when the check was requested (lawful basis)' },
);

/** The identity lookups' consent headers, for the OpenAPI document (the body's `consent` wins when both are sent). */
export const ConsentHeaders = Type.Object({
  'x-consent-reference': Type.Optional(Type.String({ description: 'Consent reference (instead of the body’s consent.reference; the only way for GET lookups and multipart forms)' })),
  'x-consent-obtained-at': Type.Optional(Type.String({ description: 'When consent was obtained, ISO 8601 with a time zone' })),
  'x-consent-channel': Type.Optional(Type.String({ description: `How consent was obtained: ${CONSENT_CHANNELS.join(', ')}` })),
});
