import { Type, type TSchema } from 'typebox';
import { ErrorStyleA } from '../platform/error-schemas.js';

/** Schemas every portal route shares. Portal errors are style A. */

export const PORTAL_TAG = 'Portal';

export const PortalError = ErrorStyleA;

/** The error responses of a portal route. */
export function portalErrors(...codes: (400 | 401 | 402 | 403 | 404 | 409 | 422 | 429)[]) {
  const out: Record<number, typeof PortalError> = { 500: PortalError };
  for (const code of codes) out[code] = PortalError;
  return out;
}

export const OrgParams = Type.Object({ orgId: Type.String({ description: 'Organization id' }) });

export const ModeQuery = Type.Object({
  mode: Type.Optional(Type.Union([Type.Literal('test'), Type.Literal('live')], { description: 'Whose data: test (default) or live' })),
});

/** A value or null (TypeBox has no shorthand for it). */
export const Nullable = <T extends TSchema>(schema: T) => Type.Union([schema, Type.Null()]);

/** An organization's risk level and NIN payload type (spec: Risk levels, Payload types). */
export const RiskLevel = Type.Union([Type.Literal('NONE'), Type.Literal('LOW'), Type.Literal('MEDIUM'), Type.Literal('HIGH')]);
export const PayloadType = Type.Union([Type.Literal('FULL'), Type.Literal('HALF')]);

export const Role = Type.Union([Type.Literal('owner'), Type.Literal('admin'), Type.Literal('developer'), Type.Literal('viewer')]);

/** A page of a portal list: the rows, and how many there are in all. */
export const PortalPage = <T extends TSchema>(item: T) =>
  Type.Object({ data: Type.Array(item), total: Type.Integer(), limit: Type.Integer(), offset: Type.Integer() });

export const Done = Type.Object({ ok: Type.Literal(true) });

/** Cookie-authenticated routes, for the OpenAPI document. */
export const sessionSecurity = [{ session: [] }];
