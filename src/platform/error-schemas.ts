import { Type } from 'typebox';

/** Every error body's `requestId` (src/platform/request-context.ts): the answer's `X-Request-Id`. */
export const requestIdProperty = () =>
  Type.Optional(Type.String({ description: "The request's id, as in the X-Request-Id header: quote it when you write to support", examples: ['req_5f0c2b9e8a7d41c3b6e2a901'] }));

/** Error, style A (workflow endpoints, the portal, console and field APIs, every 5xx). */
export const ErrorStyleA = Type.Object(
  { status: Type.Literal('error'), code: Type.String(), message: Type.String(), requestId: requestIdProperty() },
  { description: 'Error, style A' },
);
