import { coordinate, photoUrls, renderApplicant, renderNeighbor, timestamp, type ApplicantView } from '../agents/render.js';
import type { Neighbor } from '../agents/visit.js';
import type { FileUrls } from '../files/urls.js';
import type { LookupScreeningData } from '../identities/screening.js';
import type { StatusTriple } from '../platform/state-machine.js';
import { BUSINESS_MACHINE } from './states.js';
import type { AddressSource, BusinessRow } from './tables.js';

export interface BusinessInfo {
  name: string;
  type: string;
  rcNumber: string;
  isBusinessKnown?: boolean;
  isBusinessOwnerKnown?: boolean;
  ownerVisitsFrequently?: boolean;
}

/** The business verification record (spec: Business verification record). */
export interface BusinessRecord {
  id: number;
  reference: string;
  applicant: ApplicantView & { email: string };
  business: BusinessInfo;
  canContactPoc: boolean;
  isCorrectBusinessName?: boolean;
  businessNameFound: string;
  businessArea: string;
  businessPhotos: string[];
  photos: string[];
  createdAt: string;
  completedAt: string;
  lattitude: string;
  longitude: string;
  neighbor: Neighbor;
  status: StatusTriple;
  city: string;
  street: string;
  landmark: string;
  lga: string;
  state: string;
  country: string;
  /** Where street, city, lga and state came from (issue 19). */
  addressSource: AddressSource;
  flaggedForReview: boolean;
  reviewReason: string;
  /** The screening of the company made at creation (organizations that screen business verifications). */
  screeningId?: number;
  /** Only in the create answer: that screening's outcome, or why none was made. */
  screening?: LookupScreeningData;
}

/** The columns a record is rendered from: lists select only these. */
export const BUSINESS_RECORD_COLUMNS = [
  'id', 'reference', 'applicant', 'name', 'type', 'rc_number', 'can_contact_poc', 'findings', 'created_at', 'completed_at',
  'latitude', 'longitude', 'photo_ids', 'neighbor', 'status', 'reason', 'city', 'street', 'landmark', 'lga', 'state', 'country',
  'address_source', 'flagged_for_review', 'review_reason', 'screening_id',
] as const satisfies readonly (keyof BusinessRow)[];

export type BusinessRecordRow = Pick<BusinessRow, (typeof BUSINESS_RECORD_COLUMNS)[number]>;

export function renderBusiness(row: BusinessRecordRow, urls: FileUrls | undefined): BusinessRecord {
  const findings = row.findings ?? {};
  const business: BusinessInfo = { name: row.name, type: row.type ?? '', rcNumber: row.rc_number };
  // The three booleans appear once an agent has reported them (spec: "on some records only").
  if (findings.isBusinessKnown !== undefined) business.isBusinessKnown = findings.isBusinessKnown;
  if (findings.isBusinessOwnerKnown !== undefined) business.isBusinessOwnerKnown = findings.isBusinessOwnerKnown;
  if (findings.ownerVisitsFrequently !== undefined) business.ownerVisitsFrequently = findings.ownerVisitsFrequently;
  const photos = photoUrls(row.photo_ids, urls);
  const record: BusinessRecord = {
    id: Number(row.id),
    reference: row.reference,
    applicant: { ...renderApplicant(row.applicant), email: row.applicant.email ?? '' },
    business,
    canContactPoc: row.can_contact_poc,
    businessNameFound: findings.businessNameFound ?? '',
    businessArea: findings.businessArea ?? '',
    businessPhotos: photos,
    photos,
    createdAt: timestamp(row.created_at),
    completedAt: timestamp(row.completed_at),
    lattitude: coordinate(row.latitude),
    longitude: coordinate(row.longitude),
    neighbor: renderNeighbor(row.neighbor),
    status: BUSINESS_MACHINE.display(row.status, row.reason),
    city: row.city,
    street: row.street,
    landmark: row.landmark,
    lga: row.lga,
    state: row.state,
    country: row.country,
    addressSource: row.address_source,
    flaggedForReview: row.flagged_for_review,
    reviewReason: row.review_reason ?? '',
  };
  if (findings.isCorrectBusinessName !== undefined) record.isCorrectBusinessName = findings.isCorrectBusinessName;
  if (row.screening_id !== null) record.screeningId = Number(row.screening_id);
  return record;
}
