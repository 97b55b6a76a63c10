import multipart from '@fastify/multipart';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { ErrorA } from '../agents/schemas.js';
import { addressKey } from '../platform/client-address.js';
import { ApiError } from '../platform/errors.js';
import { refuseControlCharacters, unreadableForm } from '../platform/input.js';
import type { FrameUpload } from './attempts.js';
import { IdNotVerified, SessionFlow, TooManyAttempts } from './flow.js';
import { FRAME_UPLOAD_TIMEOUT_MS, type FrameUploadPlaces } from './frame-upload-places.js';
import { CAPTURE, MAX_FRAME_BYTES, MAX_ID_ATTEMPTS, MAX_LIVENESS_ATTEMPTS } from './liveness.js';
import * as S from './schemas.js';

const TAGS = ['Verification sessions: end user'];
const BASE = '/verify/api/:token';
/** The frames form: every frame at its largest, and the timestamps. */
export const FRAMES_LIMIT = CAPTURE.maxFrames * MAX_FRAME_BYTES + 64 * 1024;
/** Short links tried per address per minute: a 10-character code cannot be guessed at this pace. */
export const HANDOFF_REDIRECTS_PER_MINUTE = 30;

/** Error answers of the end-user API: style A, plus the ID step's 422 (with the tries left) and the attempts' 429. */
function errors(...codes: (400 | 402 | 403 | 404 | 408 | 409 | 413 | 415 | 422 | 429 | 503)[]) {
  const out: Record<number, typeof ErrorA | typeof S.IdNotVerifiedError> = { 500: ErrorA };
  for (const code of codes) out[code] = code === 422 ? S.IdNotVerifiedError : ErrorA;
  return out;
}

/** Whether a Content-Type names a multipart form (the type is case-insensitive and may carry parameters). */
function isMultipartForm(contentType: string | undefined): boolean {
  return contentType?.split(';', 1)[0]!.trim().toLowerCase() === 'multipart/form-data';
}

export interface EndUserRoutesOptions {
  flow: SessionFlow;
  /** Requests per minute per client address (VOUCH_RATE_LIMIT_PER_ADDRESS). */
  perAddress: number;
  /** The frames uploads in flight (VOUCH_FRAME_UPLOADS_PER_ADDRESS, VOUCH_FRAME_UPLOADS_PER_PROCESS). */
  frameUploads: FrameUploadPlaces;
}

/**
 * The end-user API (docs/sessions.md, "End-user API"), which the hosted page and the web SDK
 * call with the session's url token or client secret in the path. No secret, no cookie: the
 * token is the capability. Limited per client address; every answer is `no-store` and sends no
 * referrer; tokens never reach the log (src/platform/logging.ts redacts them).
 */
export async function endUserRoutes(parent: FastifyInstance, { flow, perAddress, frameUploads }: EndUserRoutesOptions): Promise<void> {
  const app = parent.withTypeProvider<TypeBoxTypeProvider>();
  const uploads = new WeakMap<FastifyRequest, FrameUpload>();
  /** Each admitted upload's deadline, cleared once its form has arrived. */
  const deadlines = new WeakMap<FastifyRequest, NodeJS.Timeout>();
  const byAddress = parent.rateLimit({ max: perAddress, keyGenerator: (request: FastifyRequest) => `verify:${addressKey(request.ip)}` });
  const handoffByAddress = parent.rateLimit({ max: HANDOFF_REDIRECTS_PER_MINUTE, keyGenerator: (request: FastifyRequest) => `handoff:${addressKey(request.ip)}` });

  app.addHook('onRequest', async (request, reply) => {
    void reply.header('cache-control', 'no-store').header('referrer-policy', 'no-referrer');
    await (request.routeOptions.url === '/v/:code' ? handoffByAddress : byAddress).call(parent, request, reply);
  });
  // An answer sent before its request's body has arrived (a refusal, or an error part-way through
  // a form) closes the connection: Node would otherwise read the rest of the body, and keep the
  // socket, for as long as the client takes to send it.
  app.addHook('onSend', async (request, reply) => {
    if (!request.raw.complete) void reply.header('connection', 'close');
  });

  await app.register(multipart, {
    throwFileSizeLimit: false,
    limits: { fileSize: MAX_FRAME_BYTES, files: CAPTURE.maxFrames, fields: 2, parts: CAPTURE.maxFrames + 2, fieldSize: 16 * 1024 },
  });
  // A form announced larger than the frames form can be is refused before a byte of it is read.
  // The multipart parser reads the body part by part, as the handler asks (no up-front bodyLimit
  // check), and `request.isMultipart()` is only set once it has run, after this hook: the header
  // is read here instead.
  app.addHook('preParsing', async (request) => {
    const length = Number(request.headers['content-length']);
    if (isMultipartForm(request.headers['content-type']) && Number.isFinite(length) && length > FRAMES_LIMIT) {
      throw new ApiError('PAYLOAD_TOO_LARGE', `At most ${CAPTURE.maxFrames} frames of ${MAX_FRAME_BYTES / 1024} KB each`);
    }
  });

  /**
   * Admits a frames upload before a byte of its form is read: the token, its session and the
   * attempt are checked as the decision will check them (flow.admitFrames: 404, 409), then the
   * upload takes its places (FrameUploadPlaces: 409, 429, 503), held until its answer is sent or
   * its connection closes, and must arrive within FRAME_UPLOAD_TIMEOUT_MS (408; docs/sessions.md, "Limits").
   */
  const admitUpload = async (request: FastifyRequest<{ Params: { token: string; attemptId: string } }>, reply: FastifyReply) => {
    if (!isMultipartForm(request.headers['content-type'])) throw new ApiError('UNSUPPORTED_MEDIA_TYPE', 'Send the frames as multipart/form-data: the field "timestamps", then the files "frame"');
    const { token, attemptId } = request.params;
    await flow.admitFrames(token, attemptId);
    const release = frameUploads.take(addressKey(request.ip), attemptId);
    const deadline = setTimeout(() => {
      if (!reply.sent) reply.send(new ApiError('REQUEST_TIMEOUT', `The frames did not arrive within ${Math.ceil(frameUploads.timeoutMs / 1000)} s; start a new attempt`));
    }, frameUploads.timeoutMs).unref();
    deadlines.set(request, deadline);
    const done = () => {
      clearTimeout(deadline);
      release();
    };
    reply.raw.once('finish', done).once('close', done);
    // The client may have gone while its attempt was being checked: 'close' has then been and gone.
    if (reply.raw.destroyed || request.raw.socket.destroyed) done();
  };

  /** Reads an admitted frames form (the timestamps, then the frames) for the handler. */
  const readFrames = async (request: FastifyRequest) => {
    const frames: Buffer[] = [];
    let timestamps: unknown;
    try {
      for await (const part of request.parts()) {
        if (part.type === 'file') {
          if (part.fieldname !== 'frame') throw new ApiError('VALIDATION_ERROR', `Unexpected file field "${part.fieldname}"; send each frame as "frame"`);
          const bytes = await part.toBuffer();
          if (part.file.truncated) throw new ApiError('PAYLOAD_TOO_LARGE', `Frame ${frames.length + 1} is larger than ${MAX_FRAME_BYTES / 1024} KB`);
          frames.push(bytes);
        } else if (part.fieldname === 'timestamps' && typeof part.value === 'string') {
          if (part.valueTruncated) throw new ApiError('PAYLOAD_TOO_LARGE', 'The timestamps field is too long');
          refuseControlCharacters({ timestamps: part.value }, 'body');
          try {
            timestamps = JSON.parse(part.value);
          } catch {
            throw new ApiError('VALIDATION_ERROR', 'timestamps must be a JSON array of numbers');
          }
        } else {
          throw new ApiError('VALIDATION_ERROR', `Unexpected field "${part.fieldname}"; send "timestamps" and the "frame" files`);
        }
      }
    } catch (error) {
      const code = (error as { code?: string }).code;
      if (code === 'FST_FILES_LIMIT') throw new ApiError('VALIDATION_ERROR', `At most ${CAPTURE.maxFrames} frames per attempt`);
      if (code === 'FST_PARTS_LIMIT' || code === 'FST_FIELDS_LIMIT') throw new ApiError('VALIDATION_ERROR', 'The form has too many fields');
      throw unreadableForm(error);
    }
    if (!Array.isArray(timestamps) || !timestamps.every((value) => typeof value === 'number')) {
      throw new ApiError('VALIDATION_ERROR', 'timestamps is required: a JSON array of numbers, one per frame');
    }
    clearTimeout(deadlines.get(request));
    uploads.set(request, { timestamps: timestamps as number[], frames });
    request.body = {};
  };

  /** Sends `work`'s answer with `status`; the two answers that are not plain ApiErrors: the ID step's tries left (422), no tries left (429). */
  const answer = async (reply: FastifyReply, status: number, work: () => Promise<unknown>): Promise<FastifyReply> => {
    try {
      const value = await work();
      return reply.status(status).send(value);
    } catch (err) {
      if (err instanceof IdNotVerified) return reply.status(422).send({ status: 'error', code: 'ID_NOT_VERIFIED', message: err.message, attemptsLeft: err.attemptsLeft });
      if (err instanceof TooManyAttempts) return reply.status(429).send({ status: 'error', code: 'TOO_MANY_ATTEMPTS', message: err.message });
      throw err;
    }
  };

  app.get(
    BASE,
    {
      schema: {
        tags: TAGS,
        operationId: 'endUserViewSession',
        summary: 'The end user\'s view of a session: the step to show, the consent text, tries left, the result',
        description: 'Either token works (the url token or the client secret). After the session ends the view shows the result for an hour, then the token answers 404 like an unknown one.',
        params: S.TokenParams,
        response: { 200: S.EndUserView, ...errors(404) },
      },
    },
    async (request) => flow.view(request.params.token),
  );

  app.post(
    `${BASE}/consent`,
    {
      schema: {
        tags: TAGS,
        operationId: 'endUserConsent',
        summary: 'The end user accepts the consent text (recorded with the time, address and text version)',
        description: 'A prefilled ID is looked up at once: the view then moves past the ID step, or the session ends when the ID is not found or does not match.',
        params: S.TokenParams,
        body: S.ConsentAnswer,
        response: { 200: S.EndUserView, ...errors(400, 402, 403, 404, 409, 429, 503) },
      },
    },
    async (request, reply) => answer(reply, 200, () => flow.consent(request.params.token, request.ip)),
  );

  app.post(
    `${BASE}/id`,
    {
      schema: {
        tags: TAGS,
        operationId: 'endUserSubmitId',
        summary: 'The ID step: the end user\'s ID type and number, looked up in the registry',
        description: `${MAX_ID_ATTEMPTS} tries per session, one at a time: another ID sent while one is being checked is 409. A number not found or not matching the details the organization gave answers 422 ID_NOT_VERIFIED with attemptsLeft (the two are not told apart). The last failed try ends the session; an ID that passed cannot be replaced. A prefilled ID cannot be replaced either: an empty body retries its lookup. A live session pays its price with its first lookup, before the registry is asked: 402 while its organization's wallet cannot, with no lookup made and no try spent. 403 for a live session whose organization's live access was turned off (as every step but cancel). A session started from a public link also answers 429 past the link's ID tries per network or per minute, and 402 when its payment would pass the link's spend cap, before anything is looked up.`,
        params: S.TokenParams,
        body: S.IdAnswer,
        response: { 200: S.EndUserView, ...errors(400, 402, 403, 404, 409, 422, 429, 503) },
      },
    },
    async (request, reply) => answer(reply, 200, () => flow.submitId(request.params.token, request.body, request.ip)),
  );

  app.post(
    `${BASE}/liveness/attempts`,
    {
      schema: {
        tags: TAGS,
        operationId: 'endUserStartLivenessAttempt',
        summary: 'Start a liveness attempt: 2 or 3 challenges chosen by the server, and how to capture frames',
        description: `${MAX_LIVENESS_ATTEMPTS} attempts per session (an attempt still open is given again); then 429 TOO_MANY_ATTEMPTS. 409 before the ID has passed, and while an ID is being checked. 403 when a live session's organization lost live access.`,
        params: S.TokenParams,
        body: S.EmptyBody,
        response: { 201: S.AttemptAnswer, ...errors(400, 402, 403, 404, 409, 429) },
      },
    },
    async (request, reply) => answer(reply, 201, () => flow.startAttempt(request.params.token)),
  );

  app.post(
    `${BASE}/liveness/attempts/:attemptId/frames`,
    {
      bodyLimit: FRAMES_LIMIT,
      preParsing: admitUpload,
      preValidation: readFrames,
      schema: {
        tags: TAGS,
        operationId: 'endUserSubmitFrames',
        summary: 'The frames of a liveness attempt; the answer is the view after the decision',
        description: `multipart/form-data: the field "timestamps" (a JSON array of whole ms since the first frame, one per frame), then up to ${CAPTURE.maxFrames} files "frame" (JPEG, ${MAX_FRAME_BYTES / 1024} KB each). The view is "done" when the session ended, or back at "liveness" with lastAttempt's reasons. Answered before the form is read, and the connection closed, when the frames could not be taken: 404 or 409 for the token, session or attempt, 409 while another upload of the attempt is in flight, 429 or 503 (with Retry-After) past the uploads in flight of the client's address or of the server, 503 (Retry-After 5) when the organization, or test mode, already holds all the liveness decisions it may (the others wait their turn, served in turn by organization), 403 when a live session's organization lost live access. A form must arrive within ${FRAME_UPLOAD_TIMEOUT_MS / 60_000} minutes of its admission (408).`,
        consumes: ['multipart/form-data'],
        params: S.AttemptParams,
        response: { 200: S.EndUserView, ...errors(400, 403, 404, 408, 409, 413, 415, 429, 503) },
      },
    },
    async (request) => flow.submitFrames(request.params.token, request.params.attemptId, uploads.get(request)!),
  );

  app.post(
    `${BASE}/cancel`,
    {
      schema: {
        tags: TAGS,
        operationId: 'endUserCancel',
        summary: 'The end user stops: the session ends cancelled',
        params: S.TokenParams,
        body: S.EmptyBody,
        response: { 200: S.EndUserView, ...errors(400, 404, 409) },
      },
    },
    async (request) => flow.cancel(request.params.token),
  );

  app.post(
    `${BASE}/handoff`,
    {
      schema: {
        tags: TAGS,
        operationId: 'endUserHandoff',
        summary: 'Continue on another device: a short link (15 minutes) and its QR code',
        params: S.TokenParams,
        body: S.EmptyBody,
        response: { 201: S.HandoffAnswer, ...errors(400, 403, 404, 409, 429) },
      },
    },
    async (request, reply) => answer(reply, 201, () => flow.handoff(request.params.token)),
  );

  app.get(
    '/v/:code',
    {
      // A link people open in a browser (a redirect or a page), not an API call: kept out of the
      // OpenAPI document like the hosted page itself; docs/sessions.md describes it.
      schema: { hide: true, params: S.HandoffParams },
    },
    async (request, reply) => {
      const target = await flow.redeemHandoff(request.params.code);
      if (target) return reply.redirect(target, 303);
      return reply
        .status(404)
        .type('text/html; charset=utf-8')
        .send(
          '<!doctype html><html lang="en"><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1"><title>Link not valid</title>' +
            '<main style="font-family:system-ui,sans-serif;max-width:32rem;margin:3rem auto;padding:0 1rem"><h1>This link does not work any more</h1>' +
            '<p>Links to continue a verification on another device work for 15 minutes. Go back to the other device and ask for a new one.</p></main></html>',
        );
    },
  );
}
