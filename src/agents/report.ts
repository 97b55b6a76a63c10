import multipart, { type MultipartFile } from '@fastify/multipart';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { Kysely, Transaction } from 'kysely';
import { Type, type Static } from 'typebox';
import { PHOTO_MAX_SIDE, reencodePhoto, UnreadablePhoto, type ReencodedPhoto } from '../files/photos.js';
import { MAX_PHOTO_BYTES, MAX_PHOTOS, putFile, recordFiles, sniffImage, type StoredFile } from '../files/service.js';
import type { FileStore } from '../files/store.js';
import { normalizePhone } from '../identities/matching.js';
import type { DB } from '../platform/db/schema.js';
import { ApiError } from '../platform/errors.js';
import { refuseControlCharacters, unreadableForm } from '../platform/input.js';
import { reviewReasons } from './review.js';
import { Enum, LooseBoolean, Opt, Str } from './schemas.js';
import { findOpenTask, type FieldTask } from './service.js';
import type { FieldTaskSource } from './tasks.js';
import type { FieldTaskKind } from './tables.js';
import type { VisitReport } from './visit.js';

/**
 * A visit report, whoever files it: the agent API (`/v1/agent/...`, bearer credential) and the
 * field app (`/api/field/...`, session cookie) both read the same multipart form here and file it
 * through `fileVisitReport`, so the two can never disagree on what is valid or what it does.
 */

export const FIELD_LIMIT = 2_000;
/** Ten photos at their limit, and the form's text fields. */
export const REPORT_LIMIT = MAX_PHOTOS * MAX_PHOTO_BYTES + 1024 * 1024;

export const TaskParams = Type.Object({
  kind: Enum(['address', 'business']),
  id: Type.String({ pattern: '^\\d{1,15}$' }),
});

export const ReportForm = Type.Object({
  outcome: Enum(['verified', 'failed']),
  reason: Opt(Str('For a failed outcome: one of the documented reasons (docs/states.md); default address/business not found')),
  latitude: Type.Number({ minimum: -90, maximum: 90 }),
  longitude: Type.Number({ minimum: -180, maximum: 180 }),
  neighborName: Opt(Str()),
  neighborComment: Opt(Str()),
  neighborPhone: Opt(Str()),
  neighbourName: Opt(Str('Alias of neighborName')),
  neighbourComment: Opt(Str('Alias of neighborComment')),
  neighbourPhone: Opt(Str('Alias of neighborPhone')),
  isBusinessKnown: Opt(LooseBoolean('Business visits only')),
  isBusinessOwnerKnown: Opt(LooseBoolean('Business visits only')),
  ownerVisitsFrequently: Opt(LooseBoolean('Business visits only')),
  isCorrectBusinessName: Opt(LooseBoolean('Business visits only')),
  businessNameFound: Opt(Str('Business visits only: the name on site')),
  businessArea: Opt(Str('Business visits only: e.g. commercial, residential')),
  photos: Opt(Type.Unsafe<unknown>({ type: 'array', items: { type: 'string', format: 'binary' }, description: `1 to ${MAX_PHOTOS} JPEG, PNG or WebP files` })),
});

export type ReportFields = Static<typeof ReportForm>;

/** The report's fields that only a business visit takes. */
export const BUSINESS_FINDINGS = ['isBusinessKnown', 'isBusinessOwnerKnown', 'ownerVisitsFrequently', 'isCorrectBusinessName', 'businessNameFound', 'businessArea'] as const;

export const REPORT_DESCRIPTION = `multipart/form-data. A report the review check flags (a position more than 50 km outside the state of the place, fewer than 2 photos for a verified address, filed after the visit was due) is accepted and held for the operator's review: the verification completes when an operator approves it. Photos: 1 to ${MAX_PHOTOS} files named "photos", JPEG, PNG or WebP, ${MAX_PHOTO_BYTES / 1024 / 1024} MB each; each is stored re-encoded as a JPEG without its metadata (EXIF, GPS), upright, at most ${PHOTO_MAX_SIDE.toLocaleString('en')} px on the longest side, and one that does not decode is refused.`;

/** A photo as uploaded; it is stored re-encoded (`reencodePhoto`), never as these bytes. */
export interface Photo {
  name: string;
  bytes: Buffer;
}

const invalid = (message: string) => new ApiError('VALIDATION_ERROR', message);

async function readPhoto(part: MultipartFile): Promise<Photo> {
  const bytes = await part.toBuffer();
  if (part.file.truncated) {
    throw new ApiError('PAYLOAD_TOO_LARGE', `Photo "${part.filename}" is larger than ${MAX_PHOTO_BYTES / 1024 / 1024} MB`);
  }
  // The cheap check, before the task is looked up; decoding waits until the report is filed.
  if (!sniffImage(bytes)) throw invalid(`Photo "${part.filename}" is not a JPEG, PNG or WebP image`);
  return { name: part.filename, bytes };
}

/** Each photo decoded and re-encoded, one at a time (a 12 MP photo takes about 0.2 s of CPU); 400 for one that does not decode. */
async function reencodePhotos(photos: readonly Photo[]): Promise<ReencodedPhoto[]> {
  const encoded: ReencodedPhoto[] = [];
  for (const photo of photos) {
    try {
      encoded.push(await reencodePhoto(photo.bytes));
    } catch (error) {
      if (error instanceof UnreadablePhoto) throw invalid(`Photo "${photo.name}" ${error.message}`);
      throw error;
    }
  }
  return encoded;
}

/**
 * Makes the routes of `app` (one plugin's scope) take visit reports: multipart with limits, a
 * declared length over what ten photos weigh refused before a byte is read, and the form of a
 * `.../report` route read before validation (files kept aside, fields become the body).
 * Authenticate in `onRequest`, so that nobody's upload is read before we know who sends it.
 * Returns the photos of a request.
 */
export async function acceptVisitReports(app: FastifyInstance): Promise<(request: FastifyRequest) => Photo[]> {
  const uploads = new WeakMap<FastifyRequest, Photo[]>();
  await app.register(multipart, {
    throwFileSizeLimit: false,
    limits: { fileSize: MAX_PHOTO_BYTES, files: MAX_PHOTOS, fields: 30, parts: MAX_PHOTOS + 30, fieldSize: FIELD_LIMIT },
  });
  app.addHook('preParsing', async (request) => {
    const length = Number(request.headers['content-length']);
    if (Number.isFinite(length) && length > REPORT_LIMIT) {
      throw new ApiError('PAYLOAD_TOO_LARGE', `A visit report may weigh at most ${REPORT_LIMIT / 1024 / 1024} MB`);
    }
  });
  app.addHook('preValidation', async (request) => {
    if (!request.routeOptions.url?.endsWith('/report')) return;
    if (!request.isMultipart()) throw new ApiError('UNSUPPORTED_MEDIA_TYPE', 'Send the visit report as multipart/form-data with the photos as files');
    const fields: Record<string, string> = {};
    const photos: Photo[] = [];
    try {
      for await (const part of request.parts()) {
        if (part.type === 'file') {
          if (!['photos', 'photo', 'photos[]'].includes(part.fieldname)) throw invalid(`Unexpected file field "${part.fieldname}"; send the photos as "photos"`);
          photos.push(await readPhoto(part));
        } else if (part.valueTruncated) {
          throw new ApiError('PAYLOAD_TOO_LARGE', `The form field ${part.fieldname} is longer than ${FIELD_LIMIT} characters`);
        } else if (typeof part.value === 'string') {
          fields[part.fieldname] = part.value;
        }
      }
    } catch (error) {
      const code = (error as { code?: string }).code;
      if (code === 'FST_FILES_LIMIT') throw new ApiError('PAYLOAD_TOO_LARGE', `Send at most ${MAX_PHOTOS} photos`);
      if (code === 'FST_PARTS_LIMIT' || code === 'FST_FIELDS_LIMIT') throw invalid('The form has too many fields');
      throw unreadableForm(error);
    }
    refuseControlCharacters(fields, 'body');
    uploads.set(request, photos);
    request.body = fields;
  });
  return (request) => uploads.get(request) ?? [];
}

export interface OpenTask {
  task: FieldTask;
  source: FieldTaskSource;
}

/** The agent's open task of that kind and id with its source, or 404 (not theirs, closed, unknown). */
export async function openTaskOf(db: Kysely<DB>, sources: readonly FieldTaskSource[], agentId: string, kind: FieldTaskKind, rawId: string): Promise<OpenTask> {
  const source = sources.find((candidate) => candidate.kind === kind);
  const task = source ? await findOpenTask(db, agentId, kind, Number(rawId)) : undefined;
  if (!source || !task) throw new ApiError('NOT_FOUND_ERROR', 'No such open task assigned to you');
  return { task, source };
}

/** Starts the visit (from then on a cancellation is not refunded); 409 when it was started already. */
export async function startVisit(db: Kysely<DB>, { task, source }: OpenTask, now = new Date()): Promise<void> {
  await db.transaction().execute((trx) => source.startVisit(trx, { orgId: task.orgId, mode: task.mode }, task.verificationId, now));
}

/**
 * Why a visit report needs a person to look at it, or undefined. The one place this is decided
 * (the rules are `reviewReasons` in review.ts, docs/field-agents.md): a GPS position far outside
 * the place's state, too few photos for a verified address, a report filed after the visit was
 * due. A flagged report is held for the operator's review instead of completing the verification.
 */
export function visitReviewReason(task: FieldTask, report: Pick<VisitReport, 'outcome' | 'latitude' | 'longitude' | 'photoIds'>, now: Date): string | undefined {
  const reasons = reviewReasons(task, report, now);
  return reasons.length > 0 ? reasons.join('; ') : undefined;
}

export interface FiledReport {
  outcome: 'verified' | 'failed';
  /** The failure reason of a failed outcome. */
  reason: string | undefined;
  reviewReason: string | undefined;
  /** Held for an operator's review (flagged) instead of completing the verification. */
  held: boolean;
  photoIds: string[];
}

export interface FileReportOptions {
  now?: Date;
  /** More work in the report's transaction (the field app keeps its idempotency key there). */
  inTransaction?: (trx: Transaction<DB>, filed: FiledReport) => Promise<void>;
}

/**
 * Checks a report (photos, reason, neighbour's phone), stores its photos re-encoded and completes the
 * verification (its record, webhook and task) in one transaction. Throws a style-A ApiError for
 * anything wrong; a refused or failed report leaves no photo behind.
 */
export async function fileVisitReport(
  db: Kysely<DB>,
  store: FileStore,
  { task, source }: OpenTask,
  body: ReportFields,
  photos: readonly Photo[],
  options: FileReportOptions = {},
): Promise<FiledReport> {
  const now = options.now ?? new Date();
  if (photos.length === 0) throw invalid('photos: at least one photo of the place is required');
  const reason = body.outcome === 'failed' ? (body.reason?.trim() || source.defaultReason) : undefined;
  if (reason !== undefined && !source.reasons.includes(reason)) throw invalid(`reason must be one of ${source.reasons.join(', ')}`);
  const neighborPhoneRaw = (body.neighborPhone ?? body.neighbourPhone ?? '').trim();
  const neighborPhone = neighborPhoneRaw === '' ? '' : normalizePhone(neighborPhoneRaw);
  if (neighborPhone === undefined) throw invalid('neighborPhone must be a valid Nigerian phone number');
  const encoded = await reencodePhotos(photos);
  const scope = { orgId: task.orgId, mode: task.mode };
  const stored: StoredFile[] = [];
  const photoIds: string[] = [];
  try {
    for (const photo of encoded) {
      const file = await putFile(store, photo.bytes, photo.contentType);
      stored.push(file);
      photoIds.push(file.id);
    }
    const report: VisitReport = {
      outcome: body.outcome,
      reason,
      latitude: body.latitude,
      longitude: body.longitude,
      photoIds,
      neighbor: {
        name: (body.neighborName ?? body.neighbourName ?? '').trim(),
        comment: (body.neighborComment ?? body.neighbourComment ?? '').trim(),
        phone: neighborPhone,
      },
      findings:
        task.kind === 'business'
          ? {
              isBusinessKnown: body.isBusinessKnown,
              isBusinessOwnerKnown: body.isBusinessOwnerKnown,
              ownerVisitsFrequently: body.ownerVisitsFrequently,
              isCorrectBusinessName: body.isCorrectBusinessName,
              businessNameFound: body.businessNameFound?.trim(),
              businessArea: body.businessArea?.trim(),
            }
          : {},
      reviewReason: visitReviewReason(task, { outcome: body.outcome, latitude: body.latitude, longitude: body.longitude, photoIds }, now),
    };
    return await db.transaction().execute(async (trx) => {
      await recordFiles(trx, scope, stored);
      const result = await source.complete(trx, scope, task.verificationId, report, now);
      const filed: FiledReport = { outcome: body.outcome, reason, reviewReason: report.reviewReason, held: result === 'held', photoIds };
      await options.inTransaction?.(trx, filed);
      return filed;
    });
  } catch (error) {
    // The verification did not change (e.g. cancelled meanwhile): the photos belong to nothing.
    await Promise.all(photoIds.map((id) => store.delete(id).catch(() => undefined)));
    throw error;
  }
}
