import multipart, { type MultipartFile } from '@fastify/multipart';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { Kysely } from 'kysely';
import { Type } from 'typebox';
import { MAX_PHOTO_BYTES, MAX_PHOTOS, putFile, recordFiles, sniffImage, type ImageType, type StoredFile } from '../files/service.js';
import type { FileStore } from '../files/store.js';
import { normalizePhone } from '../identities/matching.js';
import { gpsReviewReason } from '../locations/geo.js';
import type { DB } from '../platform/db/schema.js';
import { ApiError } from '../platform/errors.js';
import { Enum, errorsA, LooseBoolean, Opt, Str, success } from './schemas.js';
import { authenticateAgent, findOpenTask, listAgents, openTasksOf, type AgentContext, type FieldTask } from './service.js';
import type { FieldTaskSource } from './tasks.js';
import type { FieldTaskKind } from './tables.js';
import type { VisitReport } from './visit.js';

declare module 'fastify' {
  interface FastifyRequest {
    agent: AgentContext;
  }
}

const TAGS = ['Field agents'];
const FIELD_LIMIT = 2_000;
const REPORT_LIMIT = MAX_PHOTOS * MAX_PHOTO_BYTES + 1024 * 1024;

const TaskView = Type.Object({
  kind: Enum(['address', 'business']),
  id: Type.Integer(),
  reference: Str(),
  assignedAt: Str(),
  visitStartedAt: Str('Empty until the visit is started'),
  place: Type.Object({ street: Str(), city: Str(), landmark: Str(), lga: Str(), state: Str(), country: Str() }),
  contact: Type.Object({ name: Str(), phone: Str('Empty when the customer did not allow contact') }),
  business: Opt(Type.Object({ name: Str(), type: Str(), rcNumber: Str() })),
});

const TaskParams = Type.Object({
  kind: Enum(['address', 'business']),
  id: Type.String({ pattern: '^\\d{1,15}$' }),
});

const ReportForm = Type.Object({
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

const AgentView = Type.Object({
  id: Str(),
  name: Str(),
  email: Str(),
  phone: Str(),
  states: Type.Array(Str()),
  active: Type.Boolean(),
  openTasks: Type.Integer(),
});

export interface AgentRoutesOptions {
  db: Kysely<DB>;
  store: FileStore;
  sources: readonly FieldTaskSource[];
}

interface Photo {
  bytes: Buffer;
  type: ImageType;
}

const invalid = (message: string) => new ApiError('VALIDATION_ERROR', message);

async function readPhoto(part: MultipartFile): Promise<Photo> {
  const bytes = await part.toBuffer();
  if (part.file.truncated) {
    throw new ApiError('PAYLOAD_TOO_LARGE', `Photo "${part.filename}" is larger than ${MAX_PHOTO_BYTES / 1024 / 1024} MB`);
  }
  const type = sniffImage(bytes);
  if (!type) throw invalid(`Photo "${part.filename}" is not a JPEG, PNG or WebP image`);
  return { bytes, type };
}

/**
 * The agent API: an agent (Authorization: Bearer ak_...) lists their open tasks, starts a visit,
 * and files the visit report with photos, which completes the verification (and its webhook).
 */
export async function agentRoutes(parent: FastifyInstance, { db, store, sources }: AgentRoutesOptions): Promise<void> {
  const app = parent.withTypeProvider<TypeBoxTypeProvider>();
  const sourceOf = new Map<FieldTaskKind, FieldTaskSource>(sources.map((source) => [source.kind, source]));
  const uploads = new WeakMap<FastifyRequest, Photo[]>();
  // The same bearer scheme, with an agent credential (ak_...) instead of a customer secret.
  const security = [{ bearer: [] }];

  await app.register(multipart, {
    throwFileSizeLimit: false,
    limits: { fileSize: MAX_PHOTO_BYTES, files: MAX_PHOTOS, fields: 30, parts: MAX_PHOTOS + 30, fieldSize: FIELD_LIMIT },
  });
  app.addHook('onRequest', async (request) => {
    request.agent = await authenticateAgent(db, request.headers.authorization);
  });

  // A declared length over what ten photos can weigh is refused before a byte of the body is read.
  app.addHook('preParsing', async (request) => {
    const length = Number(request.headers['content-length']);
    if (Number.isFinite(length) && length > REPORT_LIMIT) {
      throw new ApiError('PAYLOAD_TOO_LARGE', `A visit report may weigh at most ${REPORT_LIMIT / 1024 / 1024} MB`);
    }
  });
  // The form is read here, before validation: files are kept aside, fields become the body.
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
      throw error;
    }
    uploads.set(request, photos);
    request.body = fields;
  });

  async function openTask(agentId: string, kind: FieldTaskKind, rawId: string): Promise<{ task: FieldTask; source: FieldTaskSource }> {
    const source = sourceOf.get(kind);
    const task = source ? await findOpenTask(db, agentId, kind, Number(rawId)) : undefined;
    if (!source || !task) throw new ApiError('NOT_FOUND_ERROR', 'No such open task assigned to you');
    return { task, source };
  }

  app.get(
    '/v1/agent/me',
    { schema: { tags: TAGS, operationId: 'getCurrentAgent', summary: 'The signed-in field agent', security, response: { 200: success(AgentView), ...errorsA(401) } } },
    async (request) => {
      const [agent] = await listAgents(db, request.agent.agentId);
      const { credentialHint: _hint, createdAt: _created, ...shown } = agent!;
      return { status: 'success' as const, data: shown };
    },
  );

  app.get(
    '/v1/agent/tasks',
    {
      schema: {
        tags: TAGS,
        operationId: 'listAgentTasks',
        summary: "The agent's open visits (addresses and businesses), oldest assignment first",
        security,
        response: { 200: success(Type.Array(TaskView)), ...errorsA(401) },
      },
    },
    async (request) => {
      const tasks = await openTasksOf(db, request.agent.agentId);
      const summaries = new Map<FieldTaskKind, Awaited<ReturnType<FieldTaskSource['summarize']>>>();
      for (const source of sources) summaries.set(source.kind, await source.summarize(db, tasks.filter((t) => t.kind === source.kind)));
      const data = tasks.flatMap((task) => {
        const summary = summaries.get(task.kind)?.get(task.verificationId);
        if (!summary) return [];
        return [{ kind: task.kind, id: task.verificationId, assignedAt: task.assignedAt?.toISOString() ?? '', ...summary }];
      });
      return { status: 'success' as const, data };
    },
  );

  app.post(
    '/v1/agent/tasks/:kind/:id/start',
    {
      schema: {
        tags: TAGS,
        operationId: 'startAgentTask',
        summary: 'Start a visit (from now on a cancellation is not refunded to the customer)',
        security,
        params: TaskParams,
        response: { 200: success(Type.Literal('ok')), ...errorsA(400, 401, 404, 409) },
      },
    },
    async (request) => {
      const { task, source } = await openTask(request.agent.agentId, request.params.kind, request.params.id);
      await db.transaction().execute((trx) =>
        source.startVisit(trx, { orgId: task.orgId, mode: task.mode }, task.verificationId, new Date()),
      );
      return { status: 'success' as const, data: 'ok' as const };
    },
  );

  app.post(
    '/v1/agent/tasks/:kind/:id/report',
    {
      bodyLimit: REPORT_LIMIT,
      schema: {
        tags: TAGS,
        operationId: 'reportAgentTask',
        summary: 'File the visit report: GPS position, photos, neighbour, outcome; completes the verification',
        description: `multipart/form-data. A position more than 50 km outside the state of the place is accepted and flagged for review. Photos: 1 to ${MAX_PHOTOS} files named "photos", JPEG, PNG or WebP, ${MAX_PHOTO_BYTES / 1024 / 1024} MB each.`,
        security,
        consumes: ['multipart/form-data'],
        params: TaskParams,
        body: ReportForm,
        response: { 200: success(Type.Literal('ok')), ...errorsA(400, 401, 404, 409, 413, 415) },
      },
    },
    async (request) => {
      const { task, source } = await openTask(request.agent.agentId, request.params.kind, request.params.id);
      const body = request.body;
      const photos = uploads.get(request) ?? [];
      if (photos.length === 0) throw invalid('photos: at least one photo of the place is required');
      const reason = body.outcome === 'failed' ? (body.reason?.trim() || source.defaultReason) : undefined;
      if (reason !== undefined && !source.reasons.includes(reason)) throw invalid(`reason must be one of ${source.reasons.join(', ')}`);
      const neighborPhoneRaw = (body.neighborPhone ?? body.neighbourPhone ?? '').trim();
      const neighborPhone = neighborPhoneRaw === '' ? '' : normalizePhone(neighborPhoneRaw);
      if (neighborPhone === undefined) throw invalid('neighborPhone must be a valid Nigerian phone number');
      const scope = { orgId: task.orgId, mode: task.mode };
      const stored: StoredFile[] = [];
      for (const photo of photos) stored.push(await putFile(store, photo.bytes, photo.type));
      const photoIds = stored.map((file) => file.id);
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
        reviewReason: gpsReviewReason(task.state, body.latitude, body.longitude),
      };
      try {
        await db.transaction().execute(async (trx) => {
          await recordFiles(trx, scope, stored);
          await source.complete(trx, scope, task.verificationId, report, new Date());
        });
      } catch (error) {
        // The verification did not change (e.g. cancelled meanwhile): the photos belong to nothing.
        await Promise.all(photoIds.map((id) => store.delete(id).catch(() => undefined)));
        throw error;
      }
      return { status: 'success' as const, data: 'ok' as const };
    },
  );
}
