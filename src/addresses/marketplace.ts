import type { Kysely } from 'kysely';
import { renderNeighbor } from '../agents/render.js';
import { maskIdentifier } from '../identities/lookups.js';
import { namesMatch } from '../identities/matching.js';
import type { DB } from '../platform/db/schema.js';
import { ApiError } from '../platform/errors.js';
import { addressIdentityIndex, keyringOf } from '../platform/crypto/fields.js';
import type { Scope } from '../platform/pagination.js';
import { canonicalIdNumber, identityKey, type IdClass } from './input.js';
import { renderAddress, type AddressRecord } from './render.js';

/**
 * The address marketplace (spec: address by identity): the most recent VERIFIED address of a
 * person, verified for any organization in live mode; in test mode for the caller's organization
 * only (sandbox addresses are whatever customers typed while integrating, real ones included, and
 * anyone can get a test secret). Privacy rule (docs/addresses-and-
 * businesses.md): the caller must already know the person's id number and both names; only the
 * address, the visit's position, dates and status are shared, never the other organization's
 * reference, applicant phone, birth date, photo, neighbour or visit photos.
 */

export interface MarketplaceQuery {
  maxAddressAge: string;
  firstname: string;
  lastname: string;
  idType: 'FRSC' | 'NIN';
  idNumber: string;
}

export type MarketplaceRecord = Omit<AddressRecord, 'reference'>;

const ID_CLASS: Record<MarketplaceQuery['idType'], IdClass> = { NIN: 'NIN', FRSC: 'FRSC' };
// Candidates with the same id number are few; names are compared in code (matching module).
const CANDIDATES = 20;

export function monthsOf(maxAddressAge: string): number {
  const match = /^(\d{1,3})M$/.exec(maxAddressAge.trim());
  const months = match ? Number(match[1]) : 0;
  if (months < 1) throw new ApiError('VALIDATION_ERROR', 'maxAddressAge must be a number of months from 1M to 999M, e.g. 6M');
  return months;
}

function monthsBefore(now: Date, months: number): Date {
  const cutoff = new Date(now);
  cutoff.setUTCMonth(cutoff.getUTCMonth() - months);
  return cutoff;
}

/** Validates the query; answers the canonical id number (400 when malformed). */
export function checkMarketplaceQuery(query: MarketplaceQuery): { months: number; idNumber: string } {
  const months = monthsOf(query.maxAddressAge);
  const idNumber = canonicalIdNumber(ID_CLASS[query.idType], query.idNumber);
  if (!idNumber) {
    throw new ApiError('VALIDATION_ERROR', query.idType === 'NIN' ? 'idNumber must be an 11-digit NIN' : 'idNumber must be a drivers licence number');
  }
  if (query.firstname.trim() === '' || query.lastname.trim() === '') {
    throw new ApiError('VALIDATION_ERROR', 'firstname and lastname are required');
  }
  return { months, idNumber };
}

export function marketplaceSubject(query: MarketplaceQuery): string {
  return `${query.idType} ${maskIdentifier(query.idNumber.replace(/[\s-]+/g, ''))}`;
}

/** The most recent matching verified address the caller may see (any organization's in live mode, its own in test mode), or undefined. */
export async function findVerifiedAddress(db: Kysely<DB>, scope: Scope, query: MarketplaceQuery, now = new Date()): Promise<MarketplaceRecord | undefined> {
  const { months, idNumber } = checkMarketplaceQuery(query);
  const rows = await db
    .selectFrom('address_verifications')
    .selectAll()
    .where('mode', '=', scope.mode)
    .$if(scope.mode === 'test', (qb) => qb.where('org_id', '=', scope.orgId))
    .where('status', '=', 'verified')
    .where('applicant_id_key', '=', addressIdentityIndex(keyringOf(db), identityKey(ID_CLASS[query.idType], idNumber)))
    .where('completed_at', '>=', monthsBefore(now, months))
    .orderBy('completed_at', 'desc')
    .limit(CANDIDATES)
    .execute();
  const row = rows.find((candidate) => namesMatch(query.firstname, candidate.applicant.firstname) && namesMatch(query.lastname, candidate.applicant.lastname));
  if (!row) return undefined;
  const { reference: _reference, ...record } = renderAddress({ ...row, photo_ids: [] }, undefined);
  return {
    ...record,
    applicant: {
      firstname: row.applicant.firstname ?? '',
      lastname: row.applicant.lastname ?? '',
      middlename: '',
      phone: '',
      idType: query.idType,
      idNumber,
      gender: '',
      birthdate: '',
      photo: '',
    },
    neighbor: renderNeighbor(null),
  };
}
