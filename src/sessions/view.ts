import type { Kysely } from 'kysely';
import { maskIdentifier } from '../identities/lookups.js';
import { logoPath } from '../portal/branding/service.js';
import type { DB, PayloadType, RiskLevel } from '../platform/db/schema.js';
import { ID_TYPE_RULES } from './input.js';
import { MAX_ID_ATTEMPTS, MAX_LIVENESS_ATTEMPTS, PROCESSING_TIMEOUT_MS } from './liveness.js';
import { shownReasons } from './render.js';
import { isOpen } from './states.js';
import type { AttemptRow, SessionIdType, SessionRow } from './tables.js';

/**
 * What the end user's page sees of a session (GET /verify/api/:token): the step to show, whom
 * it is for, what is collected and why, and the outcome once there is one. Never the identity
 * record, scores or the customer's metadata: the page is a bearer link that may be forwarded.
 */

export type EndUserStep = 'consent' | 'id' | 'liveness' | 'processing' | 'done';

/** The consent text's version: recorded with each end user's consent (docs/sessions.md, "Consent"). */
export const CONSENT_TEXT_VERSION = 'session-consent-1';

/** The version of the text a session shows: a session that screens its person says so, in a text of its own. */
export function consentTextVersion(row: Pick<SessionRow, 'check_screening'>): string {
  return row.check_screening ? `${CONSENT_TEXT_VERSION}-screening` : CONSENT_TEXT_VERSION;
}
/** Frames are kept this long at most (an organization's shorter photo period wins). */
export const FRAME_RETENTION_DAYS = 30;

export interface EndUserView {
  sessionId: string;
  status: SessionRow['status'];
  step: EndUserStep;
  organization: { name: string; logoUrl: string | null; colour: string | null };
  testMode: boolean;
  idTypes: SessionIdType[];
  idTypeDetails: { type: SessionIdType; label: string; hint: string }[];
  prefilled: { idType: SessionIdType | null; idNumberMasked: string | null };
  checks: { liveness: boolean; faceMatch: boolean };
  consent: { purpose: string; collected: string[]; retentionDays: number; recipients: string[]; version: string };
  attemptsLeft: { id: number; liveness: number };
  redirectUrl: string | null;
  expiresAt: string;
  result: null | { outcome: 'verified' | 'failed'; reasons: string[] };
  lastAttempt: { passed: boolean; reasons: string[]; quality: string[] } | null;
}

export interface OrganizationFacts {
  /** The name the person sees: the branding's display name, else the organization's. */
  name: string;
  /** The branding's logo (its path on this server) and colour, null until set in the portal. */
  logoPath: string | null;
  colour: string | null;
  riskLevel: RiskLevel;
  payloadType: PayloadType;
  /** Days the organization keeps photos (its retention setting), when it set one. */
  photoDays: number | null;
}

export async function organizationFacts(db: Kysely<DB>, orgId: string): Promise<OrganizationFacts> {
  const org = await db
    .selectFrom('organizations as o')
    .leftJoin('retention_settings as r', 'r.org_id', 'o.id')
    .leftJoin('organization_branding as b', 'b.org_id', 'o.id')
    .select(['o.name', 'o.risk_level', 'o.payload_type', 'r.photo_days', 'b.display_name', 'b.logo_file_id', 'b.colour'])
    .where('o.id', '=', orgId)
    .executeTakeFirstOrThrow();
  return {
    name: org.display_name ?? org.name,
    logoPath: org.logo_file_id ? logoPath(org.logo_file_id) : null,
    colour: org.colour ?? null,
    riskLevel: org.risk_level,
    payloadType: org.payload_type,
    photoDays: org.photo_days ?? null,
  };
}

/** How long the organization's frames are kept: FRAME_RETENTION_DAYS, or its photo period when shorter. */
export function framesKeptDays(org: Pick<OrganizationFacts, 'photoDays'>): number {
  return Math.min(FRAME_RETENTION_DAYS, org.photoDays ?? FRAME_RETENTION_DAYS);
}

export async function frameRetentionDays(db: Kysely<DB>, orgId: string): Promise<number> {
  return framesKeptDays(await organizationFacts(db, orgId));
}

export function stepOf(row: SessionRow, attempts: readonly Pick<AttemptRow, 'status' | 'submitted_at'>[], now: Date): EndUserStep {
  if (!isOpen(row.status)) return 'done';
  if (!row.user_consent) return 'consent';
  if (!row.checks.idLookup?.passed) return 'id';
  const deciding = attempts.some((a) => a.status === 'processing' && a.submitted_at !== null && now.getTime() - a.submitted_at.getTime() < PROCESSING_TIMEOUT_MS);
  return deciding ? 'processing' : 'liveness';
}

function resultOf(row: SessionRow): EndUserView['result'] {
  switch (row.status) {
    case 'verified':
      return { outcome: 'verified', reasons: [] };
    case 'failed':
    case 'expired':
    case 'cancelled':
      return { outcome: 'failed', reasons: shownReasons(row) };
    default:
      return null;
  }
}

function consentText(row: SessionRow, org: OrganizationFacts): EndUserView['consent'] {
  const collected = ['The ID number you give, and the details the ID registry holds for it (your name, date of birth and photo)'];
  if (row.check_liveness) collected.push('A short series of photos of your face taken by your camera while you follow the instructions on screen');
  let purpose = row.check_face_match
    ? `${org.name} asked Vouch to confirm that you are the person this ID belongs to: the ID is checked with its registry, and your face is compared with the photo on record.`
    : `${org.name} asked Vouch to confirm your ID with its registry${row.check_liveness ? ' and that a real person is in front of the camera' : ''}.`;
  // Screening is a legal duty of the organization (sanctions and politically exposed persons), and the person is told of it.
  if (row.check_screening) purpose += ` Your name and date of birth as the registry holds them are also checked against sanctions and politically exposed persons lists, as the law requires of ${org.name}.`;
  return {
    purpose,
    collected,
    retentionDays: framesKeptDays(org),
    recipients: [org.name, 'Vouch, the verification service that runs this check for them', 'The registry that issued your ID (NIBSS for a BVN, NIMC for a NIN, FRSC for a driver\u2019s licence)'],
    version: consentTextVersion(row),
  };
}

export function buildView(row: SessionRow, org: OrganizationFacts, attempts: readonly AttemptRow[], now: Date): EndUserView {
  const decided = attempts.filter((a) => a.decision !== null).sort((a, b) => b.number - a.number)[0];
  return {
    sessionId: row.public_id,
    status: row.status,
    step: stepOf(row, attempts, now),
    // Set in the portal (docs/sessions.md, "Branding"); until then the page uses its own colour and no logo.
    organization: { name: org.name, logoUrl: org.logoPath, colour: org.colour },
    testMode: row.mode === 'test',
    idTypes: row.id_types,
    idTypeDetails: row.id_types.map((type) => ({ type, label: ID_TYPE_RULES[type].label, hint: ID_TYPE_RULES[type].hint })),
    prefilled: {
      idType: row.applicant.idType ?? null,
      idNumberMasked: row.applicant.idNumber ? maskIdentifier(row.applicant.idNumber) : null,
    },
    checks: { liveness: row.check_liveness, faceMatch: row.check_face_match },
    consent: consentText(row, org),
    attemptsLeft: {
      id: Math.max(0, MAX_ID_ATTEMPTS - row.id_attempts),
      liveness: row.check_liveness ? Math.max(0, MAX_LIVENESS_ATTEMPTS - row.liveness_attempts) : 0,
    },
    redirectUrl: row.redirect_url,
    expiresAt: row.expires_at.toISOString(),
    result: resultOf(row),
    lastAttempt: decided?.decision ? { passed: decided.decision.passed, reasons: decided.decision.reasons, quality: decided.decision.quality ?? [] } : null,
  };
}
