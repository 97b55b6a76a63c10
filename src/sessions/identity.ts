import type { Registry } from '../identities/registry/registry.js';
import { personSubject } from '../identities/screening.js';
import type { CreateScreeningBody } from '../screening/schemas.js';
import { fieldMatches, renderBvn, renderDriversLicense, renderNin, renderVnin } from '../identities/render.js';
import type { PayloadType, RiskLevel } from '../platform/db/schema.js';
import { ID_TYPE_RULES } from './input.js';
import type { IdLookupReason } from './states.js';
import type { SessionApplicant, SessionIdType } from './tables.js';

/**
 * The ID step: the number is looked up in the registry of the session's mode (the sandbox's test
 * identities in test mode; the embedded registry and the configured upstreams live) through the
 * identity lookups' registry, and the record found is compared with what the customer prefilled,
 * as a lookup compares its applicant: the fields the organization's risk level verifies must match.
 * Nothing is charged here: the session is charged once, when it ends (docs/sessions.md, "Charging"),
 * and the record is shown only from then on.
 */

/** The person fields every ID type's record holds, and its photo (base64, a data URL or a URL). */
export interface PersonRecord {
  firstname: string;
  lastname: string;
  middlename?: string | undefined;
  birthdate?: string | undefined;
  gender?: string | undefined;
  nationality?: string | undefined;
  photo?: string | undefined;
}

/**
 * The person as the screening of a session sees them: the registry's record as a lookup's
 * screening reads it (names, date of birth, gender; src/identities/screening.ts), and nationality
 * NG when the record says Nigerian: the registries write it as a word, not a code.
 */
export function screeningSubjectOf(record: PersonRecord): CreateScreeningBody['subject'] {
  const subject = personSubject(record) ?? { type: 'person', firstname: record.firstname, lastname: record.lastname };
  if (/^nigeria(n)?$/i.test(record.nationality?.trim() ?? '')) subject.nationality = 'NG';
  return subject;
}

const RISK_FIELDS: Record<RiskLevel, readonly ('firstname' | 'lastname' | 'dob')[]> = {
  NONE: [],
  LOW: ['lastname'],
  MEDIUM: ['lastname', 'firstname'],
  HIGH: ['firstname', 'lastname', 'dob'],
};

export async function findPerson(registry: Registry, idType: SessionIdType, idNumber: string): Promise<PersonRecord | undefined> {
  return (await registry.find(ID_TYPE_RULES[idType].registry, idNumber)) as PersonRecord | undefined;
}

/** The record as the session shows it: the lookup's own rendering for the type and payload type. */
export function renderIdentity(idType: SessionIdType, record: PersonRecord, applicant: SessionApplicant, payloadType: PayloadType): Record<string, unknown> {
  const supplied = { firstname: applicant.firstname, lastname: applicant.lastname, dob: applicant.dob };
  switch (idType) {
    case 'BVN':
      return renderBvn(record as Parameters<typeof renderBvn>[0], supplied, payloadType === 'FULL');
    case 'NIN':
      return renderNin(record as Parameters<typeof renderNin>[0], supplied, payloadType);
    case 'VNIN':
      return renderVnin(record as Parameters<typeof renderVnin>[0], supplied, payloadType) as Record<string, unknown>;
    case 'DRIVERS_LICENSE':
      return renderDriversLicense(record as Parameters<typeof renderDriversLicense>[0], supplied);
  }
}

export interface IdComparison {
  fieldMatches: { firstname: boolean; lastname: boolean; dob: boolean };
  /** Empty when the fields the risk level verifies all match. */
  reasons: IdLookupReason[];
}

export function compareWithApplicant(record: PersonRecord, applicant: SessionApplicant, riskLevel: RiskLevel): IdComparison {
  const matches = fieldMatches({ firstname: applicant.firstname, lastname: applicant.lastname, dob: applicant.dob }, record);
  const verified = RISK_FIELDS[riskLevel].filter((field) => applicant[field] !== undefined);
  const mismatch = verified.some((field) => !matches[field]);
  return { fieldMatches: matches, reasons: mismatch ? ['ID_DETAILS_MISMATCH'] : [] };
}
