import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance } from 'fastify';
import type { Kysely } from 'kysely';
import { Type } from 'typebox';
import type { DB } from '../platform/db/schema.js';
import { ErrorStyleA } from '../platform/error-schemas.js';
import { ApiError } from '../platform/errors.js';
import { findStoredFile } from './service.js';
import { isFileId, type FileStore } from './store.js';
import type { FileUrls } from './urls.js';

const ErrorBody = ErrorStyleA;

export interface FileRoutesOptions {
  db: Kysely<DB>;
  store: FileStore;
  urls: FileUrls;
}

/**
 * Serves uploaded photos to whoever holds a signed, unexpired URL (no Authorization header): the
 * bytes from the disk store, or a redirect to a short-lived presigned URL of the S3 bucket.
 */
export async function fileRoutes(parent: FastifyInstance, { db, store, urls }: FileRoutesOptions): Promise<void> {
  const app = parent.withTypeProvider<TypeBoxTypeProvider>();
  app.get(
    '/v1/files/:id',
    {
      schema: {
        tags: ['Files'],
        operationId: 'downloadFile',
        summary: 'Download a visit photo through the signed URL a verification record gives',
        params: Type.Object({ id: Type.String() }),
        querystring: Type.Object({ expires: Type.Optional(Type.String()), signature: Type.Optional(Type.String()) }),
        response: {
          200: Type.Unsafe<Buffer>({ type: 'string', format: 'binary', description: 'The image (JPEG, PNG or WebP)' }),
          302: Type.Null({ description: 'With an S3 store: the image is at the Location, a presigned URL of the bucket valid for 15 minutes' }),
          403: ErrorBody,
          404: ErrorBody,
        },
      },
    },
    async (request, reply) => {
      const { id } = request.params;
      const check = urls.check(id, request.query.expires, request.query.signature);
      if (check === 'invalid') throw new ApiError('FORBIDDEN', 'This file link is not valid; fetch the verification again for a fresh link');
      if (check === 'expired') throw new ApiError('FORBIDDEN', 'This file link has expired; fetch the verification again for a fresh link');
      const file = isFileId(id) ? await findStoredFile(db, id) : undefined;
      if (!file) throw new ApiError('NOT_FOUND_ERROR', 'File not found');
      const nowMs = Date.now();
      const maxAge = Math.max(0, Number(request.query.expires) - Math.floor(nowMs / 1000));
      const direct = await store.directUrl(id);
      if (direct) {
        // The redirect may be reused while both this link and the presigned one (less a minute) hold.
        const reusable = Math.max(0, Math.min(maxAge, Math.floor((direct.expiresAt.getTime() - nowMs) / 1000) - 60));
        return reply.header('cache-control', `private, max-age=${reusable}`).header('referrer-policy', 'no-referrer').redirect(direct.url, 302);
      }
      const bytes = await store.get(id);
      if (!bytes) throw new ApiError('NOT_FOUND_ERROR', 'File not found');
      return reply
        .header('content-type', file.contentType)
        .header('cache-control', `private, max-age=${maxAge}, immutable`)
        .header('x-content-type-options', 'nosniff')
        .send(bytes as never);
    },
  );
}
