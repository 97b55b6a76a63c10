import multipart from '@fastify/multipart';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { Kysely } from 'kysely';
import type { Readable } from 'node:stream';
import { requireAuth } from '../../platform/auth.js';
import type { DB } from '../../platform/db/schema.js';
import { ApiError } from '../../platform/errors.js';
import { addToFingerprint } from '../../platform/idempotency.js';
import { refuseControlCharacters, unreadableForm } from '../../platform/input.js';
import { ConsentHeaders, lookupConsent } from '../../consent/consent.js';
import { IDENTITY_BILLABLES, skipsCache, type IdentityLookups } from '../lookups.js';
import type { Registry } from '../registry/registry.js';
import { FaceMatchCapacity, type FaceMatchCaps } from './capacity.js';
import { decodeForDetection, ImageError, MAX_IMAGE_BYTES, type DecodedImage } from './image.js';
import { decideFaceMatch, selfieForProvider, type CannotCompare, type FaceMatchGateway } from './match-decision.js';
import { faceMatchRoutingOf, LOCAL_ROUTING } from './match-routing.js';
import { FaceMatcher, UnusableHeldPhoto, type BiometricIdType } from './matcher.js';
import { fetchPhoto, PHOTO_FETCH_DEFAULTS, PhotoFetchError } from './photo-url.js';
import type { PhotoMatching } from './score.js';
import { BiometricsForm, BiometricsJson, BiometricsResponses, type BiometricsBody } from './schemas.js';
import { matchThresholdOf } from './threshold-setting.js';

const PATH = '/v1/verifications/identities/biometrics';
/** The spec's sample request omits `/v1`; it is accepted as an alias and left out of the docs. */
const ALIAS = '/verifications/identities/biometrics';

const MB = `${MAX_IMAGE_BYTES / (1024 * 1024)} MB`;
/** Room for the form's other fields and part headers around a 1 MB file. */
const FORM_LIMIT = MAX_IMAGE_BYTES + 64 * 1024;
/** A 1 MB image in base64 plus the other fields. */
const JSON_LIMIT = Math.ceil(MAX_IMAGE_BYTES / 3) * 4 + 64 * 1024;

const ID_TYPES: readonly BiometricIdType[] = ['nin', 'frsc', 'bvn'];

const NOT_FOUND: Record<BiometricIdType, string> = {
  nin: 'NIN not found. Please provide a valid NIN',
  bvn: 'BVN not found. Please provide a valid BVN',
  frsc: 'Drivers license not found. Please provide a valid license number',
};

/** The registry fields a biometric match record shows, common to BVN, NIN and drivers license records. */
interface PersonRecord {
  firstname: string;
  lastname: string;
  middlename?: string | undefined;
  gender: string;
  phone?: string | undefined;
  birthdate: string;
  nationality?: string | undefined;
  photo?: string | undefined;
}

function invalid(message: string): ApiError {
  return new ApiError('VALIDATION_ERROR', message);
}

function tooLarge(what = 'The photo'): ApiError {
  return new ApiError('PAYLOAD_TOO_LARGE', `${what} is larger than ${MB} (${MAX_IMAGE_BYTES} bytes), the limit for a biometrics image`);
}

function parseIdType(raw: unknown): BiometricIdType {
  // A request with neither JSON nor a form has no schema to answer for it.
  if (typeof raw !== 'string') throw invalid(`idType is required: one of ${ID_TYPES.join(', ')}`);
  const idType = raw.trim().toLowerCase() as BiometricIdType;
  if (!ID_TYPES.includes(idType)) throw invalid(`idType must be one of ${ID_TYPES.join(', ')}`);
  return idType;
}

/** The registry key for the number: digits for BVN and NIN, letters and digits for a license. */
function parseIdNumber(idType: BiometricIdType, raw: unknown): string {
  if (typeof raw !== 'string') throw invalid('idNumber is required');
  if (idType === 'frsc') {
    const license = raw.replace(/[\s-]+/g, '').toUpperCase();
    if (!/^[A-Z0-9]{6,20}$/.test(license)) throw invalid('idNumber must be a drivers license number of 6 to 20 letters and digits');
    return license;
  }
  const number = raw.trim();
  if (!/^\d{11}$/.test(number)) throw invalid(`idNumber must be the 11-digit ${idType.toUpperCase()}`);
  return number;
}

async function findPerson(registry: Registry, idType: BiometricIdType, idNumber: string): Promise<PersonRecord | undefined> {
  switch (idType) {
    case 'bvn':
      return registry.find('bvn', idNumber);
    case 'nin':
      return registry.find('nin', idNumber);
    case 'frsc':
      return registry.find('drivers_license', idNumber);
  }
}

/** Reads an uploaded file up to the limit: past it busboy stops handing over bytes and this answers 413. */
async function readUpload(file: Readable & { truncated?: boolean }): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of file) {
    if (file.truncated) throw tooLarge();
    chunks.push(chunk as Buffer);
  }
  if (file.truncated) throw tooLarge();
  return Buffer.concat(chunks);
}

function decodeBase64Photo(value: string): Buffer {
  const payload = value.replace(/^data:[^,]*;base64,/, '').replace(/\s+/g, '');
  if (!/^[A-Za-z0-9+/_-]*={0,2}$/.test(payload)) {
    throw invalid('photo must be a base64-encoded image (or send it as a multipart file)');
  }
  if (Math.floor((payload.length * 3) / 4) - (payload.endsWith('==') ? 2 : payload.endsWith('=') ? 1 : 0) > MAX_IMAGE_BYTES) {
    throw tooLarge();
  }
  return Buffer.from(payload, 'base64');
}

/** The upstream face-match type of each biometric identity type. */
const FACE_MATCH_TYPE = { nin: 'nin', bvn: 'bvn', frsc: 'drivers_license' } as const;

function render(idType: BiometricIdType, idNumber: string, record: PersonRecord, matching: PhotoMatching, engine: string, halfNin: boolean) {
  return {
    bvn: idType === 'bvn' ? idNumber : '',
    firstname: record.firstname,
    lastname: record.lastname,
    middlename: record.middlename ?? '',
    gender: record.gender,
    phone: halfNin ? '' : (record.phone ?? ''),
    birthdate: record.birthdate,
    nationality: record.nationality ?? '',
    photo: halfNin ? '' : (record.photo ?? '').replace(/^data:[^,]*;base64,/, ''),
    photoMatching: matching,
    faceMatchEngine: engine,
  };
}

export interface BiometricsRoutesOptions {
  db: Kysely<DB>;
  lookups: IdentityLookups;
  /** VOUCH_ALLOW_PRIVATE_URLS: let photoUrl reach loopback and private addresses (development, tests). */
  allowPrivateUrls: boolean;
  /** The face matches one organization and the whole process may run at once (src/config.ts). */
  faceMatchCaps: FaceMatchCaps;
  /** The places face matches take, shared with verification sessions' matches (made from faceMatchCaps when absent). */
  capacity?: FaceMatchCapacity;
  matcher?: FaceMatcher;
  /** The upstream router, when the live registry is one: organizations routed to a provider's face match go through it. */
  faceMatchGateway?: FaceMatchGateway | undefined;
}

/** `POST /v1/verifications/identities/biometrics`: a supplied photo against the photo on record. */
export async function biometricsRoutes(app: FastifyInstance, options: BiometricsRoutesOptions): Promise<void> {
  const { db, lookups, allowPrivateUrls, faceMatchGateway } = options;
  const matcher = options.matcher ?? new FaceMatcher();
  const capacity = options.capacity ?? new FaceMatchCapacity(options.faceMatchCaps);
  /** The uploaded file of a multipart request, kept apart from the validated fields. */
  const uploads = new WeakMap<FastifyRequest, Buffer>();

  await app.register(multipart, {
    throwFileSizeLimit: false,
    limits: { fileSize: MAX_IMAGE_BYTES, files: 1, fields: 6, parts: 8, fieldSize: JSON_LIMIT },
  });
  app.addHook('onRequest', requireAuth(db));
  // A declared length over the limit is refused before a byte of the body is read.
  app.addHook('preParsing', async (request) => {
    const length = Number(request.headers['content-length']);
    if (Number.isFinite(length) && length > (request.isMultipart() ? FORM_LIMIT : JSON_LIMIT)) {
      throw new ApiError('PAYLOAD_TOO_LARGE', `The request is too large: a biometrics image may be at most ${MB} (${MAX_IMAGE_BYTES} bytes)`);
    }
  });
  app.addHook('preValidation', async (request) => {
    if (!request.isMultipart()) return;
    const fields: Record<string, string> = {};
    try {
      for await (const part of request.parts()) {
        if (part.type === 'file') {
          if (part.fieldname !== 'photo') throw invalid(`Unexpected file field "${part.fieldname}"; send the image as "photo"`);
          const upload = await readUpload(part.file);
          uploads.set(request, upload);
          // Idempotency-Key: the file is part of what a retry must repeat.
          addToFingerprint(request, upload);
        } else if (part.valueTruncated) {
          throw tooLarge(`The form field ${part.fieldname}`);
        } else if (typeof part.value === 'string') {
          fields[part.fieldname] = part.value;
        }
      }
    } catch (error) {
      const code = (error as { code?: string }).code;
      if (code === 'FST_FILES_LIMIT') throw invalid('Send one file, the photo');
      if (code === 'FST_PARTS_LIMIT' || code === 'FST_FIELDS_LIMIT') throw invalid('The form has too many fields; send idType, idNumber and photo or photoUrl');
      throw unreadableForm(error);
    }
    refuseControlCharacters(fields, 'body');
    request.body = fields;
  });

  /** Where the supplied image comes from: exactly one of photo (file or base64) and photoUrl. */
  function photoSource(request: FastifyRequest, body: BiometricsBody): { bytes: Buffer } | { url: string } {
    const upload = uploads.get(request);
    const hasPhoto = upload !== undefined || (body.photo !== undefined && body.photo !== '');
    const url = body.photoUrl?.trim() ?? '';
    if (hasPhoto && url !== '') throw invalid('Send either photo or photoUrl, not both');
    if (!hasPhoto && url === '') throw invalid('photo or photoUrl is required: send the image as a file (photo) or its address (photoUrl)');
    if (upload) return { bytes: upload };
    if (body.photo) return { bytes: decodeBase64Photo(body.photo) };
    return { url };
  }

  /** Fetches a photoUrl if that is what was sent, and decodes the image for the face model (the bytes go to a provider's face match). */
  async function suppliedImage(source: { bytes: Buffer } | { url: string }): Promise<{ bytes: Buffer; image: DecodedImage }> {
    let bytes: Buffer;
    if ('url' in source) {
      try {
        bytes = await fetchPhoto(source.url, { ...PHOTO_FETCH_DEFAULTS, maxBytes: MAX_IMAGE_BYTES, allowPrivate: allowPrivateUrls });
      } catch (error) {
        if (!(error instanceof PhotoFetchError)) throw error;
        if (error.tooLarge) throw tooLarge('The image at photoUrl');
        throw new ApiError('BAD_REQUEST', `photoUrl ${error.message}`);
      }
    } else {
      bytes = source.bytes;
    }
    try {
      return { bytes, image: await decodeForDetection(bytes) };
    } catch (error) {
      if (error instanceof ImageError) throw invalid(`${'url' in source ? 'The image at photoUrl' : 'The supplied photo'} ${error.message}`);
      throw error;
    }
  }

  const routeOptions = (hide: boolean) => ({
    bodyLimit: JSON_LIMIT,
    schema: {
      hide,
      tags: ['Identity lookups'],
      operationId: 'matchBiometrics',
      summary: 'Match a photo against the photo on record for a NIN, BVN or drivers license (frsc)',
      description: `Send \`multipart/form-data\` with \`photo\` (file) or \`photoUrl\`, or JSON with \`photo\` (base64) or \`photoUrl\`; one of the two, ${MB} at most, JPEG, PNG or WebP. The largest face in the photo is compared. Charged in live mode only when the comparison was made; a live wallet short of the price is refused (402) before the identity is looked up. Matches in progress are capped per account (429) and per server (503), both with \`Retry-After\`. In live mode an operator may route the account's face matches to an upstream provider's selfie match (\`faceMatchEngine\` names the engine that decided); when it cannot answer and the local engine is not its fallback, 503 with \`Retry-After\`, uncharged. The \`/v1\`-less path \`${ALIAS}\` is an alias.`,
      security: [{ bearer: [] }],
      headers: ConsentHeaders,
      consumes: ['multipart/form-data', 'application/json'],
      body: { content: { 'multipart/form-data': { schema: BiometricsForm }, 'application/json': { schema: BiometricsJson } } },
      response: BiometricsResponses,
    },
  });

  const handler = async (request: FastifyRequest) => {
    const body = request.body as BiometricsBody;
    const idType = parseIdType(body.idType);
    const idNumber = parseIdNumber(idType, body.idNumber);
    const source = photoSource(request, body);
    const { orgId, mode, payloadType } = request.auth;
    const { record, matching, engine } = await lookups.run(request.auth, {
      billable: IDENTITY_BILLABLES.biometrics,
      identifier: idNumber,
      noCache: skipsCache(request.headers),
      consent: lookupConsent(request),
      // Runs only when the wallet can pay (lookups.run). The place is taken before the identity is
      // looked up, so a refusal (429, 503) says nothing about whether the number exists. The photo is
      // fetched, read and its face described before the identity is looked up, too: a bad image, a
      // failed fetch or no face answers alike for any number, where after the lookup its uncharged
      // 400 would tell a known number from an unknown one's 404. Throwing here leaves the lookup
      // uncharged.
      find: (registry) =>
        capacity.run(orgId, async () => {
          const supplied = await suppliedImage(source);
          const face = await matcher.describeSupplied(supplied.image);
          const record = await findPerson(registry, idType, idNumber);
          if (!record) return undefined;
          // The local model, or a provider's face match, as the organization's live routing says
          // (docs/upstreams.md, "Face matches"); no provider is asked in test mode.
          const decided = await decideFaceMatch({
            routing: mode === 'live' && faceMatchGateway ? await faceMatchRoutingOf(db, orgId) : LOCAL_ROUTING,
            gateway: mode === 'live' ? faceMatchGateway : undefined,
            type: FACE_MATCH_TYPE[idType],
            key: idNumber,
            local: async () => {
              if (!record.photo) return { cannotCompare: 'no_photo' };
              // The organization's threshold as it is now: an operator's change applies to the next match.
              const threshold = await matchThresholdOf(db, orgId);
              try {
                return await matcher.match({ mode, idType, idNumber, photo: record.photo }, face, threshold);
              } catch (err) {
                if (err instanceof UnusableHeldPhoto) return { cannotCompare: err.reason };
                throw err;
              }
            },
            selfie: () => selfieForProvider(supplied.bytes),
          });
          // A record that cannot be compared (no photo, none that decodes, no face in it, or a
          // provider that does not know it) answers as an unknown number does, uncharged: an
          // answer of its own would tell that the number exists.
          if ('cannotCompare' in decided) return unusable(request, idType, decided.cannotCompare, decided.engine);
          return { record, matching: decided.matching, engine: decided.engine };
        }),
      notFound: () => new ApiError('NOT_FOUND_ERROR', NOT_FOUND[idType], { style: 'C' }),
    });
    return { status: 'success' as const, data: render(idType, idNumber, record, matching, engine, idType === 'nin' && payloadType === 'HALF') };
  };

  /** Logged for the operator (the type, never the number), then answered as not found. */
  const unusable = (request: FastifyRequest, idType: BiometricIdType, reason: CannotCompare, engine: string): undefined => {
    request.log.warn({ idType, reason, engine }, 'biometrics: the photo on record cannot be compared; answered as not found');
    return undefined;
  };

  app.post(PATH, routeOptions(false), handler);
  app.post(ALIAS, routeOptions(true), handler);
}
