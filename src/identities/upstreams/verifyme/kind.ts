import type { UpstreamKind } from '../adapter.js';
import { UPSTREAM_TYPES } from '../adapter.js';
import { VerifyMeAdapter } from './adapter.js';
import { VERIFYME_FACE_TYPES } from './face.js';

/**
 * `verifyme`: any service that speaks our own API (../shared/spec/verification-service.md),
 * including another Vouch, reached with a live secret. See docs/upstreams.md for the account
 * settings it needs (risk level NONE, payload FULL).
 */
export const verifyme: UpstreamKind = {
  kind: 'verifyme',
  types: UPSTREAM_TYPES,
  faceMatchTypes: VERIFYME_FACE_TYPES,
  checkSecret(secret: string): void {
    if (!/^\S{8,512}$/.test(secret)) throw new Error('the secret must be the upstream account\'s live secret: 8 to 512 characters without spaces');
  },
  create: (settings) => new VerifyMeAdapter(settings),
};
