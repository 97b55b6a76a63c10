import { workflowConsent, type Consent, type ConsentInput } from '../consent/consent.js';
import type { IdentityType } from '../identities/records.js';
import type { RiskLevel } from '../platform/db/schema.js';
import { checkDob, checkReference, checkRiskFields, Problems, text } from '../respondents/fields.js';
import { SESSION_ID_TYPES, type SessionApplicant, type SessionIdType } from './tables.js';

/**
 * Checks of a session's create body that a JSON schema cannot express well (every problem is
 * collected, so one 400 names them all), and the ID numbers the end user types.
 */

export const DEFAULT_EXPIRES_IN_MINUTES = 1440;
export const MIN_EXPIRES_IN_MINUTES = 5;
/** A week: a link a person has not opened in a week is better issued again. */
export const MAX_EXPIRES_IN_MINUTES = 7 * 24 * 60;
export const MAX_METADATA_KEYS = 20;
export const MAX_METADATA_KEY = 40;
export const MAX_METADATA_VALUE = 500;
export const MAX_REDIRECT_URL = 2048;

export interface CreateSessionInput {
  reference?: string | undefined;
  idTypes?: string[] | undefined;
  applicant?: { firstname?: string | undefined; lastname?: string | undefined; dob?: string | undefined; idType?: string | undefined; idNumber?: string | undefined } | undefined;
  checks?: { liveness?: boolean | undefined; faceMatch?: boolean | undefined; screening?: boolean | undefined } | undefined;
  redirectUrl?: string | undefined;
  expiresInMinutes?: number | undefined;
  metadata?: Record<string, unknown> | undefined;
  consent?: ConsentInput | undefined;
}

export interface CheckedSession {
  reference: string;
  idTypes: SessionIdType[];
  applicant: SessionApplicant;
  liveness: boolean;
  faceMatch: boolean;
  /** Undefined: the organization's default (organization_screening.sessions). */
  screening: boolean | undefined;
  redirectUrl: string | null;
  expiresInMinutes: number;
  metadata: Record<string, string>;
  consent: Consent | undefined;
}

/** How each ID type is looked up, written and checked. */
export const ID_TYPE_RULES: Record<SessionIdType, { registry: IdentityType; label: string; hint: string; canonical(raw: string): string | undefined }> = {
  BVN: { registry: 'bvn', label: 'BVN (Bank Verification Number)', hint: '11 digits', canonical: digits11 },
  NIN: { registry: 'nin', label: 'NIN (National Identification Number)', hint: '11 digits', canonical: digits11 },
  VNIN: { registry: 'vnin', label: 'Virtual NIN', hint: '16 letters and digits from the NIMC app or *346*3*', canonical: (raw) => alnum(raw, 16, 16) },
  DRIVERS_LICENSE: { registry: 'drivers_license', label: "Driver's licence (FRSC)", hint: '6 to 20 letters and digits, as printed', canonical: (raw) => alnum(raw, 6, 20) },
};

function digits11(raw: string): string | undefined {
  const digits = raw.replace(/[\s-]+/g, '');
  return /^\d{11}$/.test(digits) ? digits : undefined;
}

function alnum(raw: string, min: number, max: number): string | undefined {
  const compact = raw.replace(/[\s-]+/g, '').toUpperCase();
  return new RegExp(`^[A-Z0-9]{${min},${max}}$`).test(compact) ? compact : undefined;
}

/** An ID type as the API names it, read loosely (case, spaces, "DRIVERS LICENSE"); undefined when unknown. */
export function readIdType(raw: string): SessionIdType | undefined {
  const value = raw.trim().toUpperCase().replace(/[\s-]+/g, '_').replace('LICENCE', 'LICENSE');
  return (SESSION_ID_TYPES as readonly string[]).includes(value) ? (value as SessionIdType) : undefined;
}

function checkIdTypes(raw: string[] | undefined, problems: Problems): SessionIdType[] {
  if (raw === undefined) return [...SESSION_ID_TYPES];
  if (raw.length === 0) {
    problems.add(`idTypes must name at least one of ${SESSION_ID_TYPES.join(', ')}`);
    return [];
  }
  const out: SessionIdType[] = [];
  for (const value of raw) {
    const type = typeof value === 'string' ? readIdType(value) : undefined;
    if (!type) problems.add(`idTypes: "${String(value).slice(0, 40)}" is not one of ${SESSION_ID_TYPES.join(', ')}`);
    else if (!out.includes(type)) out.push(type);
  }
  return out;
}

function checkRedirectUrl(raw: string | undefined, problems: Problems): string | null {
  const value = text(raw);
  if (value === undefined) return null;
  let url: URL | undefined;
  try {
    url = new URL(value);
  } catch {
    url = undefined;
  }
  if (!url || (url.protocol !== 'https:' && url.protocol !== 'http:') || value.length > MAX_REDIRECT_URL || url.username || url.password) {
    problems.add(`redirectUrl must be an absolute http(s) URL without credentials, at most ${MAX_REDIRECT_URL} characters`);
    return null;
  }
  return url.toString();
}

function checkMetadata(raw: Record<string, unknown> | undefined, problems: Problems): Record<string, string> {
  if (raw === undefined) return {};
  const entries = Object.entries(raw);
  if (entries.length > MAX_METADATA_KEYS) problems.add(`metadata may hold at most ${MAX_METADATA_KEYS} keys`);
  const out: Record<string, string> = {};
  for (const [key, value] of entries.slice(0, MAX_METADATA_KEYS)) {
    if (key.length === 0 || key.length > MAX_METADATA_KEY) problems.add(`metadata keys must be 1 to ${MAX_METADATA_KEY} characters`);
    else if (typeof value !== 'string') problems.add(`metadata.${key} must be a string`);
    else if (value.length > MAX_METADATA_VALUE) problems.add(`metadata.${key} must be at most ${MAX_METADATA_VALUE} characters`);
    else out[key] = value;
  }
  return out;
}

function checkApplicant(raw: CreateSessionInput['applicant'], idTypes: SessionIdType[], riskLevel: RiskLevel, now: Date, problems: Problems): SessionApplicant {
  checkRiskFields(problems, riskLevel, raw);
  const out: SessionApplicant = {};
  if (!raw) return out;
  for (const field of ['firstname', 'lastname'] as const) {
    const value = text(raw[field]);
    if (value === undefined) continue;
    if (value.length > 100) problems.add(`applicant.${field} must be at most 100 characters`);
    else out[field] = value;
  }
  const dob = checkDob(problems, 'applicant.dob', raw.dob, now);
  if (dob !== undefined) out.dob = dob;
  const idTypeRaw = text(raw.idType);
  const idNumberRaw = text(raw.idNumber);
  if (idTypeRaw === undefined && idNumberRaw === undefined) return out;
  if (idTypeRaw === undefined || idNumberRaw === undefined) {
    problems.add('applicant.idType and applicant.idNumber go together: send both to prefill the ID, or neither to let the end user give it');
    return out;
  }
  const idType = readIdType(idTypeRaw);
  if (!idType) {
    problems.add(`applicant.idType must be one of ${SESSION_ID_TYPES.join(', ')}`);
    return out;
  }
  if (!idTypes.includes(idType)) problems.add(`applicant.idType ${idType} is not one of the session's idTypes (${idTypes.join(', ')})`);
  const idNumber = ID_TYPE_RULES[idType].canonical(idNumberRaw);
  if (!idNumber) problems.add(`applicant.idNumber must be a ${idType}: ${ID_TYPE_RULES[idType].hint}`);
  else Object.assign(out, { idType, idNumber });
  return out;
}

/** Validates a create body for an organization at `riskLevel`; throws 400 naming every problem. */
export function checkCreateSession(input: CreateSessionInput, options: { riskLevel: RiskLevel; consentRequired: boolean; now: Date }): CheckedSession {
  const problems = new Problems();
  // Generated references read `vsr_...`: never confused with a session id (`ses_...`).
  const reference = checkReference(problems, input.reference, 'vsr');
  const idTypes = checkIdTypes(input.idTypes, problems);
  const applicant = checkApplicant(input.applicant, idTypes, options.riskLevel, options.now, problems);
  const liveness = input.checks?.liveness ?? true;
  const faceMatch = input.checks?.faceMatch ?? true;
  // The face compared with the registry photo is the live frame: without liveness it could be a photo of a photo.
  if (faceMatch && !liveness) problems.add('checks.faceMatch needs checks.liveness: the face compared with the registry photo is a frame of the liveness check (use the biometrics endpoint to compare a photo you hold)');
  const expiresInMinutes = input.expiresInMinutes ?? DEFAULT_EXPIRES_IN_MINUTES;
  if (!Number.isInteger(expiresInMinutes) || expiresInMinutes < MIN_EXPIRES_IN_MINUTES || expiresInMinutes > MAX_EXPIRES_IN_MINUTES) {
    problems.add(`expiresInMinutes must be a whole number from ${MIN_EXPIRES_IN_MINUTES} to ${MAX_EXPIRES_IN_MINUTES}`);
  }
  const redirectUrl = checkRedirectUrl(input.redirectUrl, problems);
  const metadata = checkMetadata(input.metadata, problems);
  const consent = workflowConsent(input.consent, options.consentRequired, problems);
  problems.throwIfAny();
  return { reference, idTypes, applicant, liveness, faceMatch, screening: input.checks?.screening, redirectUrl, expiresInMinutes, metadata, consent };
}
