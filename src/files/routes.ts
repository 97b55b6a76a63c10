import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance } from 'fastify';
import type { Kysely } from 'kysely';
import { Type } from 'typebox';
import type { DB } from '../platform/db/schema.js';
import { ApiError } from '../platform/errors.js';
import { readStoredFile } from './service.js';
import type { FileStore } from './store.js';
import type { FileUrls } from './urls.js';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const ErrorBody = Type.Object({ status: Type.Literal('error'), code: Type.String(), message: Type.String() });

export interface FileRoutesOptions {
  db: Kysely<DB>;
  store: FileStore;
  urls: FileUrls;
}

/** Serves uploaded photos to whoever holds a signed, unexpired URL (no Authorization header). */
export async function fileRoutes(parent: FastifyInstance, { db, store, urls }: FileRoutesOptions): Promise<void> {
  const app = parent.withTypeProvider<TypeBoxTypeProvider>();
  app.get(
    '/v1/files/:id',
    {
      schema: {
        tags: ['Files'],
        summary: 'Download a visit photo through the signed URL a verification record gives',
        params: Type.Object({ id: Type.String() }),
        querystring: Type.Object({ expires: Type.Optional(Type.String()), signature: Type.Optional(Type.String()) }),
        response: {
          200: Type.Unsafe<Buffer>({ type: 'string', format: 'binary', description: 'The image (JPEG, PNG or WebP)' }),
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
      const file = UUID.test(id) ? await readStoredFile(db, store, id) : undefined;
      if (!file) throw new ApiError('NOT_FOUND_ERROR', 'File not found');
      const maxAge = Math.max(0, Number(request.query.expires) - Math.floor(Date.now() / 1000));
      return reply
        .header('content-type', file.contentType)
        .header('cache-control', `private, max-age=${maxAge}, immutable`)
        .header('x-content-type-options', 'nosniff')
        .send(file.bytes as never);
    },
  );
}
