import { Type, type Static } from 'typebox';
import { ConsentBody } from '../../consent/consent.js';
import { ErrorStyleB, identityErrors, success } from '../schemas.js';
import { distanceToScore, MATCH_SCORE_BOUNDS, MATCH_THRESHOLD } from './score.js';

const ID_TYPE = Type.String({ description: '`nin`, `frsc` (drivers license) or `bvn`' });
const ID_NUMBER = Type.String({ description: 'The NIN, BVN (11 digits) or drivers license number' });
const PHOTO_URL = Type.String({ description: 'http(s) URL of a JPEG, PNG or WebP image of at most 1 MB, fetched within 5 s' });

/** The form the spec documents: one of `photo` (file) or `photoUrl`. */
export const BiometricsForm = Type.Object({
  idType: ID_TYPE,
  idNumber: ID_NUMBER,
  photo: Type.Optional(Type.String({ format: 'binary', description: 'The image file: JPEG, PNG or WebP, at most 1 MB' })),
  photoUrl: Type.Optional(PHOTO_URL),
});

/** The JSON body clients also send: the photo as base64 (a `data:` URL is accepted too). */
export const BiometricsJson = Type.Object({
  idType: ID_TYPE,
  idNumber: ID_NUMBER,
  photo: Type.Optional(Type.String({ description: 'The image, base64-encoded; at most 1 MB once decoded' })),
  photoUrl: Type.Optional(PHOTO_URL),
  consent: Type.Optional(ConsentBody),
});

/** What the handler reads, whichever body carried it (the uploaded file travels apart). */
export type BiometricsBody = Static<typeof BiometricsJson>;

export const BiometricsData = Type.Object({
  bvn: Type.String({ description: 'The BVN for a BVN identity; empty for NIN and FRSC identities' }),
  firstname: Type.String(),
  lastname: Type.String(),
  middlename: Type.String(),
  gender: Type.String(),
  phone: Type.String({ description: 'Empty when the record has none (drivers license) or for a HALF NIN payload' }),
  birthdate: Type.String({ description: 'DD-MM-YYYY' }),
  nationality: Type.String(),
  photo: Type.String({ description: 'The photo on record, base64-encoded (empty for a HALF NIN payload)' }),
  photoMatching: Type.Object({
    match: Type.Boolean({ description: 'matchScore ≥ matchingThreshold' }),
    matchScore: Type.Number({ description: 'Similarity of the two faces, 0 to maxScore: 100 × (1 − descriptor distance)' }),
    matchingThreshold: Type.Number({
      description: `The lowest score called a match: the threshold this match was decided at, the account's when its account manager set one (${MATCH_SCORE_BOUNDS.min} to ${MATCH_SCORE_BOUNDS.max}), else the default (${distanceToScore(MATCH_THRESHOLD)})`,
    }),
    maxScore: Type.Number(),
  }),
  faceMatchEngine: Type.String({
    description:
      'Which engine decided `photoMatching` (not in the spec): `local`, the face model of this service, or the name of the upstream provider the operator routes the account\'s live face matches to; then `photoMatching` is on that provider\'s scale',
  }),
});

export const BiometricsResponses = {
  200: success(BiometricsData),
  ...identityErrors('C'),
  413: ErrorStyleB,
  415: ErrorStyleB,
  429: ErrorStyleB,
  503: ErrorStyleB,
};
