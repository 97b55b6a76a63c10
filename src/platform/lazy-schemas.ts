import { AjvCompiler } from '@fastify/ajv-compiler';
import { SerializerSelector } from '@fastify/fast-json-stringify-compiler';
import type { FastifyServerOptions } from 'fastify';
import { textToTypeValidator } from './body-types.js';

type Validate = ((data: unknown, context?: unknown) => unknown) & { errors?: unknown; schemaEnv?: unknown };
type Serialize = (data: unknown) => string;

/**
 * Fastify's own compilers (Ajv for requests, fast-json-stringify for answers), each route's schema
 * compiled on its first use instead of all of them at start: compiling every route took about half
 * a second of every `vouch serve` start and of every app a test builds, for routes most of which a
 * given process or test never calls. The compiled code is the same; only when it is built changes.
 */
export function lazySchemaController(): NonNullable<FastifyServerOptions['schemaController']> {
  const validators = AjvCompiler();
  const serializers = SerializerSelector();
  return {
    compilersFactory: {
      buildValidator(externalSchemas: unknown, options: unknown) {
        const build = validators(externalSchemas as never, options as never) as (route: unknown) => Validate;
        const ajv = options as { customOptions?: object } | undefined;
        const strictOptions = { ...ajv, customOptions: { ...ajv?.customOptions, coerceTypes: false } };
        const buildStrict = validators(externalSchemas as never, strictOptions as never) as (route: unknown) => Validate;
        return (route: unknown) => {
          let compiled: Validate | undefined;
          const validate: Validate = (data, context) => {
            // Bodies convert only text to the field's type (src/platform/body-types.ts).
            compiled ??= (route as { httpPart?: string }).httpPart === 'body' ? textToTypeValidator(buildStrict(route), build(route)) : build(route);
            const result = compiled(data, context);
            validate.errors = compiled.errors;
            return result;
          };
          // Fastify hands the parent object to validators that say they are Ajv's (schemaEnv), so
          // type coercion can replace a root value (a query string's array): keep that.
          validate.schemaEnv = true;
          return validate;
        };
      },
      buildSerializer(externalSchemas: unknown, options: unknown) {
        const build = serializers(externalSchemas as never, options as never) as (route: unknown) => Serialize;
        return (route: unknown) => {
          let compiled: Serialize | undefined;
          return (data: unknown) => (compiled ??= build(route))(data);
        };
      },
    },
  } as NonNullable<FastifyServerOptions['schemaController']>;
}
