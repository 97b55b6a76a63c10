import { coordinate, photoUrls, renderApplicant, renderNeighbor, timestamp, type ApplicantView } from '../agents/render.js';
import type { Neighbor } from '../agents/visit.js';
import type { FileUrls } from '../files/urls.js';
import type { StatusTriple } from '../platform/state-machine.js';
import { ADDRESS_MACHINE } from './states.js';
import type { AddressRow } from './tables.js';

/** The address verification record (spec: Address verification record), as GET returns it and webhooks carry it. */
export interface AddressRecord {
  id: number;
  reference: string;
  applicant: ApplicantView;
  createdAt: string;
  completedAt: string;
  lattitude: string;
  longitude: string;
  photos: string[];
  neighbor: Neighbor;
  status: StatusTriple;
  city: string;
  street: string;
  landmark: string;
  lga: string;
  state: string;
  country: string;
  flaggedForReview: boolean;
  reviewReason: string;
}

/** The columns a record is rendered from: lists select only these. */
export const ADDRESS_RECORD_COLUMNS = [
  'id', 'reference', 'applicant', 'created_at', 'completed_at', 'latitude', 'longitude', 'photo_ids', 'neighbor', 'status',
  'reason', 'city', 'street', 'landmark', 'lga', 'state', 'country', 'flagged_for_review', 'review_reason',
] as const satisfies readonly (keyof AddressRow)[];

export type AddressRecordRow = Pick<AddressRow, (typeof ADDRESS_RECORD_COLUMNS)[number]>;

export function renderAddress(row: AddressRecordRow, urls: FileUrls | undefined): AddressRecord {
  return {
    id: Number(row.id),
    reference: row.reference,
    applicant: renderApplicant(row.applicant),
    createdAt: timestamp(row.created_at),
    completedAt: timestamp(row.completed_at),
    lattitude: coordinate(row.latitude),
    longitude: coordinate(row.longitude),
    photos: photoUrls(row.photo_ids, urls),
    neighbor: renderNeighbor(row.neighbor),
    status: ADDRESS_MACHINE.display(row.status, row.reason),
    city: row.city,
    street: row.street,
    landmark: row.landmark,
    lga: row.lga,
    state: row.state,
    country: row.country,
    flaggedForReview: row.flagged_for_review,
    reviewReason: row.review_reason ?? '',
  };
}
