import type { Kysely } from 'kysely';
import { Type, type Static } from 'typebox';
import type { AuthContext } from '../platform/auth.js';
import type { DB } from '../platform/db/schema.js';
import { ApiError } from '../platform/errors.js';
import { organizationScreening } from '../screening/organization-setting.js';
import type { CreateScreeningBody } from '../screening/schemas.js';
import type { ScreeningService } from '../screening/service.js';

/**
 * Screening of identity lookups (issue 51, part 3; docs/screening.md, "Lookups and sessions"): an
 * organization that turned it on (the switches on the portal's Screenings page, `organization_screening.lookups`)
 * has the person or company every lookup finds screened against the watchlists, as
 * POST /v1/verifications/screenings would, and the lookup's answer carries `data.screening`.
 * Organizations that did not turn it on get the answer they always had, without the field.
 *
 * The lookup is made and charged first: a screening that cannot be made (no list loaded, a wallet
 * that cannot pay it) does not take the paid answer away; `screening.status` then says
 * `NOT_SCREENED` and `message` why.
 */

export const LookupScreening = Type.Object(
  {
    id: Type.Union([Type.Integer(), Type.Null()], { description: 'The screening (GET /v1/verifications/screenings/:id); null when it could not be made' }),
    status: Type.String({ description: 'CLEAR, PENDING_REVIEW (hits to review in the portal), or NOT_SCREENED' }),
    hits: Type.Integer(),
    message: Type.Optional(Type.String({ description: 'Why it was not screened' })),
  },
  { description: "Only for organizations that screen every lookup: the screening of the person or company found (addition to the spec)" },
);
export type LookupScreeningData = Static<typeof LookupScreening>;

export type LookupScreener = (auth: AuthContext, subject: CreateScreeningBody['subject'] | undefined) => Promise<LookupScreeningData | undefined>;

/** What a lookup's record gives the screening: a person's names and birth date, or a company's name. */
export function personSubject(record: { firstname?: unknown; middlename?: unknown; lastname?: unknown; birthdate?: unknown; gender?: unknown }): CreateScreeningBody['subject'] | undefined {
  const text = (value: unknown) => (typeof value === 'string' && value.trim() !== '' ? value.trim() : undefined);
  const firstname = text(record.firstname);
  const lastname = text(record.lastname);
  if (!firstname || !lastname) return undefined;
  const subject: CreateScreeningBody['subject'] = { type: 'person', firstname, lastname };
  const middlename = text(record.middlename);
  if (middlename) subject.middlename = middlename;
  const dob = /^(\d{2})-(\d{2})-(\d{4})$/.exec(text(record.birthdate) ?? '');
  if (dob) subject.dob = `${dob[3]}-${dob[2]}-${dob[1]}`;
  const gender = text(record.gender)?.toLowerCase();
  if (gender === 'male' || gender === 'm') subject.gender = 'male';
  if (gender === 'female' || gender === 'f') subject.gender = 'female';
  return subject;
}

/** A person known by one full name (the voter's card). */
export function fullNameSubject(fullname: unknown): CreateScreeningBody['subject'] | undefined {
  return typeof fullname === 'string' && /\p{L}/u.test(fullname) ? { type: 'person', name: fullname.trim() } : undefined;
}

export function companySubject(name: unknown): CreateScreeningBody['subject'] | undefined {
  return typeof name === 'string' && /\p{L}/u.test(name) ? { type: 'organization', name: name.trim(), nationality: 'NG' } : undefined;
}

export function lookupScreener(db: Kysely<DB>, service: Pick<ScreeningService, 'create'>): LookupScreener {
  return async (auth, subject) => {
    if (!subject || !(await organizationScreening(db, auth.orgId)).lookups) return undefined;
    try {
      // The lookup's own consent (when the organization requires one) was given for this check.
      const screening = await service.create({ ...auth, consentRequired: false }, { subject });
      return { id: screening.id, status: screening.status.status, hits: screening.hits.length };
    } catch (err) {
      const message = notScreenedReason(err, { unpaid: 'The wallet cannot pay the screening: fund the account and screen again with POST /v1/verifications/screenings', name: "The record's name" });
      if (message === undefined) throw err;
      return { id: null, status: 'NOT_SCREENED', hits: 0, message };
    }
  };
}

/**
 * Why a screening made beside a paid answer (a lookup, a business verification) could not be
 * made, for the errors that leave that answer standing as NOT_SCREENED: a wallet that cannot pay
 * it (`unpaid`), no list loaded, a name that cannot be screened (`name` says whose). Undefined for
 * any other error, which the caller answers as it is.
 */
export function notScreenedReason(err: unknown, words: { unpaid: string; name: string }): string | undefined {
  if (!(err instanceof ApiError)) return undefined;
  if (err.code === 'PAYMENT_REQUIRED') return words.unpaid;
  if (err.code === 'SERVICE_UNAVAILABLE') return err.message;
  if (err.code === 'VALIDATION_ERROR') return `${words.name} cannot be screened: ${err.message}`;
  return undefined;
}
