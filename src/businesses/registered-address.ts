import { text, type Place } from '../addresses/input.js';
import { CAC_TYPES, cacKey, type CacRecord, type CacType } from '../identities/records.js';
import type { Registry } from '../identities/registry/registry.js';
import { resolveLga, resolveState } from '../locations/nigeria.js';
import { ApiError } from '../platform/errors.js';

/**
 * A business verification sent with an rcNumber and no address (issue 19): the company is looked
 * up in the corporate registry (the CAC lookup's sources: the sandbox in test mode, the embedded
 * registry and upstreams in live mode) and its registered head office is the place visited.
 */

const TYPE_BY_PREFIX: Record<string, CacType> = { RC: 'limited_company', BN: 'business', IT: 'incorprated_trustee' };

/** The registry types an rcNumber may be registered under: its prefix says which; without one, each in turn. */
export function cacTypesOf(rcNumber: string): readonly CacType[] {
  const type = TYPE_BY_PREFIX[rcNumber.slice(0, 2)];
  return type ? [type] : CAC_TYPES;
}

/**
 * The company registered under `rcNumber` (as validated: digits with an optional RC/BN/IT
 * prefix), or undefined. A registry no source of which could answer is a 503 in the business
 * family's style, with the router's Retry-After: nothing is created or charged.
 */
export async function findRegisteredCompany(registry: Registry, rcNumber: string): Promise<CacRecord | undefined> {
  for (const type of cacTypesOf(rcNumber)) {
    let record: CacRecord | undefined;
    try {
      record = await registry.find('cac', cacKey(type, rcNumber));
    } catch (err) {
      if (!(err instanceof ApiError) || err.code !== 'SERVICE_UNAVAILABLE') throw err;
      throw new ApiError(
        'SERVICE_UNAVAILABLE',
        "The corporate registry is unavailable, so the company's registered address could not be looked up. Retry later, or send street, lga and state",
        { retryAfterSeconds: err.options.retryAfterSeconds ?? 5 },
      );
    }
    if (record) return record;
  }
  return undefined;
}

/** The comma-separated parts of an address, last first: "12 Allen Avenue, Ikeja, Lagos State" -> Lagos State, Ikeja, 12 Allen Avenue. */
function partsOf(address: string): string[] {
  return address
    .split(',')
    .map((part) => part.trim())
    .filter((part) => part !== '')
    .reverse();
}

/**
 * The company's head-office address as a place to visit: the record's state and LGA when they
 * are real ones (the LGA within that state), otherwise a whole comma-separated part of the
 * address that names one, read from the end. Only whole parts count: "Ikorodu Road" in a Lagos
 * address is a street, not the Ikorodu LGA. Undefined fields could not be found.
 */
export function registeredPlace(record: CacRecord): Partial<Place> {
  const street = text(record.headOfficeAddress);
  if (street === undefined) return {};
  const parts = partsOf(street);
  const state = resolveState(text(record.state) ?? '') ?? parts.map((part) => resolveState(part)).find((found) => found !== undefined);
  if (!state) return { street };
  const candidates = [text(record.lga), text(record.city), ...parts].filter((value): value is string => value !== undefined);
  const lga = candidates.map((candidate) => resolveLga(state, candidate)).find((found) => found !== undefined);
  return { street, city: text(record.city) ?? '', state, ...(lga ? { lga } : {}) };
}
