import { datesMatch, namesMatch } from '../identities/matching.js';
import type { Registry } from '../identities/registry/registry.js';
import type { GuarantorIdType } from './tables.js';

/** How each ID a guarantor may give is named on the page and checked. */
export const GUARANTOR_ID_TYPES: Record<GuarantorIdType, { label: string; format: RegExp; hint: string }> = {
  NIN: { label: 'NIN (National Identification Number)', format: /^\d{11}$/, hint: '11 digits' },
  BVN: { label: 'BVN (Bank Verification Number)', format: /^\d{11}$/, hint: '11 digits' },
  FRSC: { label: "Driver's licence (FRSC)", format: /^[A-Z0-9]{6,20}$/, hint: 'as printed on the licence, e.g. KJA83927AA02' },
  VIN: { label: "Voter's card (VIN)", format: /^[A-Z0-9]{9,25}$/, hint: 'the 19-character number on the card' },
};

/** Spaces and hyphens people type inside numbers go; letters are compared in upper case. */
export function compactIdNumber(value: string): string {
  return value.replace(/[\s-]+/g, '').toUpperCase();
}

export interface IdMatches {
  firstname: boolean;
  lastname: boolean;
  dob: boolean;
}

interface HeldIdentity {
  firstname: string;
  lastname: string;
  birthdate: string | undefined;
}

async function held(registry: Registry, type: GuarantorIdType, key: string): Promise<HeldIdentity | undefined> {
  switch (type) {
    case 'NIN': {
      const record = await registry.find('nin', key);
      return record && { firstname: record.firstname, lastname: record.lastname, birthdate: record.birthdate };
    }
    case 'BVN': {
      const record = await registry.find('bvn', key);
      return record && { firstname: record.firstname, lastname: record.lastname, birthdate: record.birthdate };
    }
    case 'FRSC': {
      const record = await registry.find('drivers_license', key);
      return record && { firstname: record.firstname, lastname: record.lastname, birthdate: record.birthdate };
    }
    case 'VIN': {
      const record = await registry.find('vin', key);
      return record && { firstname: record.firstName, lastname: record.lastName, birthdate: record.birthdate };
    }
  }
}

/**
 * Looks the guarantor's ID up in the registry of the verification's mode and compares it with
 * the guarantor named in the request (first and last name) and the date of birth the guarantor
 * typed. Undefined when the registry has no such ID. A voters card record without a birth date
 * is compared on the names alone.
 */
export async function checkGuarantorId(
  registry: Registry,
  type: GuarantorIdType,
  number: string,
  guarantor: { firstname: string; lastname: string },
  dob: string,
): Promise<IdMatches | undefined> {
  const identity = await held(registry, type, compactIdNumber(number));
  if (!identity) return undefined;
  return {
    firstname: namesMatch(guarantor.firstname, identity.firstname),
    lastname: namesMatch(guarantor.lastname, identity.lastname),
    dob: identity.birthdate === undefined ? true : datesMatch(dob, identity.birthdate),
  };
}
