import { UpstreamFailure, type UpstreamType } from '../adapter.js';
import { CAC_TYPES, normalizeRcNumber, type CacType } from '../../records.js';

/** Dojah's `company_type` for each of our CAC types (docs.dojah.io, Lookup CAC). */
export const DOJAH_COMPANY_TYPES: Record<CacType, string> = {
  limited_company: 'COMPANY',
  business: 'BUSINESS_NAME',
  incorprated_trustee: 'INCORPORATED_TRUSTEES',
};

export interface DojahCall {
  path: string;
  query: Record<string, string>;
}

/** The GET endpoint and query parameters Dojah documents for one lookup. */
export function dojahCall(type: UpstreamType, key: string): DojahCall {
  switch (type) {
    case 'bvn':
      return { path: '/api/v1/kyc/bvn/advance', query: { bvn: key } };
    case 'nin':
      return { path: '/api/v1/kyc/nin', query: { nin: key } };
    case 'nin_phone':
      return { path: '/api/v1/kyc/phone_number', query: { phone_number: localPhone(key) } };
    case 'vnin':
      return { path: '/api/v1/kyc/vnin', query: { vnin: key } };
    case 'drivers_license':
      return { path: '/api/v1/kyc/dl', query: { license_number: key } };
    case 'vin':
      return { path: '/api/v1/kyc/vin', query: { vin: key } };
    case 'cac': {
      const { type: cacType, rcNumber } = parseCacKey(key);
      return { path: '/api/v1/kyc/cac/basic', query: { rc_number: rcNumber, company_type: DOJAH_COMPANY_TYPES[cacType] } };
    }
    case 'tin':
      return { path: '/api/v1/kyc/tin', query: { tin: key } };
    default:
      throw new Error(`dojah has no lookup for ${String(type)}`);
  }
}

/** `limited_company:1234567` (see `cacKey`) → its type and registration number. */
export function parseCacKey(key: string): { type: CacType; rcNumber: string } {
  const separator = key.indexOf(':');
  const type = key.slice(0, separator) as CacType;
  const rcNumber = normalizeRcNumber(key.slice(separator + 1));
  // The router only sends keys it built with cacKey; a bad one is a bug on our side, not Dojah's.
  if (separator < 0 || !CAC_TYPES.includes(type) || !/^\d+$/.test(rcNumber)) {
    throw new UpstreamFailure('malformed', 'CAC key is not TYPE:RC_NUMBER');
  }
  return { type, rcNumber };
}

/** E.164 (`+2348031234567`) → the local form Dojah's examples use (`08031234567`). */
export function localPhone(e164: string): string {
  const digits = e164.replace(/\D/g, '');
  return digits.startsWith('234') ? `0${digits.slice(3)}` : digits;
}
