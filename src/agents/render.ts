import type { FileUrls } from '../files/urls.js';
import type { Neighbor, StoredApplicant } from './visit.js';

/** Rendering helpers both field-verification records share (every string field present, '' when unknown). */

export interface ApplicantView {
  firstname: string;
  lastname: string;
  middlename: string;
  phone: string;
  idType: string;
  idNumber: string;
  gender: string;
  birthdate: string;
  photo: string;
}

export function renderApplicant(applicant: StoredApplicant): ApplicantView {
  return {
    firstname: applicant.firstname ?? '',
    lastname: applicant.lastname ?? '',
    middlename: applicant.middlename ?? '',
    phone: applicant.phone ?? '',
    idType: applicant.idType ?? '',
    idNumber: applicant.idNumber ?? '',
    gender: applicant.gender ?? '',
    birthdate: applicant.birthdate ?? '',
    photo: applicant.photo ?? '',
  };
}

/** ISO 8601 in UTC with milliseconds, or '' when the moment has not happened. */
export function timestamp(value: Date | null): string {
  return value ? value.toISOString() : '';
}

export function coordinate(value: number | null): string {
  return value === null ? '' : String(value);
}

export function renderNeighbor(neighbor: Neighbor | null): Neighbor {
  return { name: neighbor?.name ?? '', comment: neighbor?.comment ?? '', phone: neighbor?.phone ?? '' };
}

/** Signed, expiring URLs of the photos; a record without photos needs no signer. */
export function photoUrls(ids: readonly string[], urls: FileUrls | undefined): string[] {
  if (ids.length === 0) return [];
  if (!urls) throw new Error('rendering photo URLs needs the file URL signer');
  return ids.map((id) => urls.url(id));
}
