import type { UpstreamType } from '../adapter.js';

/**
 * The spec's endpoint for each type, the one that answers the full record: BVN premium (the
 * basic payload lacks ten fields), and lookups sent without applicant fields (the account's
 * risk level must be NONE for that; see docs/upstreams.md).
 */
export interface Endpoint {
  method: 'GET' | 'POST';
  path: string;
  body?: Record<string, string>;
  /** How the spec writes this lookup's "not found": style C `{code, message}` or style B. */
  notFound: 'B' | 'C';
}

const BASE = 'v1/verifications/identities';

export function endpointFor(type: UpstreamType, key: string): Endpoint {
  const ref = encodeURIComponent(key);
  switch (type) {
    case 'bvn':
      return { method: 'POST', path: `${BASE}/bvn/${ref}?type=premium`, body: {}, notFound: 'C' };
    case 'nin':
      return { method: 'POST', path: `${BASE}/nin/${ref}`, body: {}, notFound: 'C' };
    case 'nin_phone':
      return { method: 'POST', path: `${BASE}/nin_phone/${ref}`, body: {}, notFound: 'C' };
    case 'vnin':
      return { method: 'POST', path: `${BASE}/virtual-nin/${ref}`, body: {}, notFound: 'C' };
    case 'drivers_license':
      return { method: 'POST', path: `${BASE}/drivers_license/${ref}`, body: {}, notFound: 'C' };
    case 'vin':
      return { method: 'POST', path: `${BASE}/vin/${ref}`, body: {}, notFound: 'B' };
    case 'cac': {
      // The registry key is `TYPE:RC` (cacKey).
      const [cacType = '', rcNumber = ''] = key.split(':');
      return { method: 'POST', path: `${BASE}/cac`, body: { type: cacType, rcNumber }, notFound: 'B' };
    }
    case 'tin':
      return { method: 'GET', path: `${BASE}/tin/${ref}`, notFound: 'B' };
  }
}
