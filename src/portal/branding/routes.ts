import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance } from 'fastify';
import { Type } from 'typebox';
import { ApiError } from '../../platform/errors.js';
import type { Actor } from '../audit.js';
import { requireMember, requireSession } from '../guard.js';
import type { AreaOptions } from '../plugin.js';
import { Done, Nullable, OrgParams, PORTAL_TAG, portalErrors, sessionSecurity } from '../schemas.js';
import { getBranding, MAX_ALLOWED_ORIGINS, MAX_DISPLAY_NAME, MAX_LOGO_BYTES, removeLogo, saveBranding, setLogo } from './service.js';

const tags = [PORTAL_TAG];

export const BrandingView = Type.Object({
  displayName: Type.String({ description: 'The name the flow shows: the organization\'s own unless set' }),
  displayNameSet: Type.Boolean({ description: 'false: displayName is the organization\'s name' }),
  organizationName: Type.String(),
  colour: Nullable(Type.String({ description: '#rrggbb; null: Vouch\'s own green' })),
  textColour: Nullable(Type.String({ description: 'The text colour of the flow\'s buttons on `colour` (white or near-black, whichever contrasts more)' })),
  contrast: Nullable(Type.Number({ description: 'Contrast ratio of textColour on colour (at least 4.5)' })),
  logo: Nullable(
    Type.Object({
      url: Type.String({ description: 'Where the flow loads it: /verify/logos/<random id> on this server' }),
      contentType: Type.String(),
      size: Type.Integer({ description: 'Bytes after re-encoding' }),
      width: Type.Integer(),
      height: Type.Integer(),
    }),
  ),
  defaultRedirectUrl: Nullable(Type.String({ description: 'The redirectUrl of sessions created without one' })),
  allowedOrigins: Type.Array(Type.String(), { description: 'Origins that may embed the flow with the web SDK; empty: any origin the SDK names' }),
  updatedAt: Nullable(Type.String({ format: 'date-time' })),
});

const BrandingBody = Type.Object(
  {
    displayName: Type.Optional(Nullable(Type.String({ maxLength: 200, description: `At most ${MAX_DISPLAY_NAME} characters; null or blank: the organization's name` }))),
    colour: Type.Optional(Nullable(Type.String({ maxLength: 20, description: '#rrggbb (or #rgb) on which white or dark text reaches 4.5:1; null or blank: Vouch\'s colour' }))),
    defaultRedirectUrl: Type.Optional(Nullable(Type.String({ maxLength: 4096, description: 'An absolute https URL without credentials; null or blank: none' }))),
    allowedOrigins: Type.Optional(Type.Array(Type.String({ maxLength: 300 }), { maxItems: 100, description: `Up to ${MAX_ALLOWED_ORIGINS} exact origins (https://host[:port]); [] lets any origin the SDK names embed the flow` })),
  },
);

/** Base64 grows 4/3, plus the JSON around it. */
const LOGO_BODY_LIMIT = Math.ceil((MAX_LOGO_BYTES * 4) / 3) + 4096;

/**
 * The verification flow's branding and session defaults (docs/sessions.md "Branding"): every
 * member reads them, owners and admins change them; every change is audited.
 */
export async function brandingRoutes(parent: FastifyInstance, { db, config, store }: AreaOptions): Promise<void> {
  const app = parent.withTypeProvider<TypeBoxTypeProvider>();
  // Guards run as preValidation: who may call is answered before the input is judged.
  const signedIn = requireSession(db);
  const member = (personId: string): Actor => ({ kind: 'member', personId });

  app.get(
    '/orgs/:orgId/branding',
    {
      preValidation: [signedIn, requireMember(db, 'org.read')],
      schema: {
        tags,
        operationId: 'portalGetBranding',
        summary: 'The hosted verification flow\'s branding (name, logo, colour) and session defaults (redirect, allowed embedding origins)',
        security: sessionSecurity,
        params: OrgParams,
        response: { 200: BrandingView, ...portalErrors(401, 404) },
      },
    },
    async (request) => getBranding(db, config.publicUrl, request.member.orgId),
  );

  app.put(
    '/orgs/:orgId/branding',
    {
      preValidation: [signedIn, requireMember(db, 'branding.manage')],
      schema: {
        tags,
        operationId: 'portalSetBranding',
        summary: 'Change the display name, colour, default redirect and allowed embedding origins (owners and admins)',
        description: 'A field left out keeps its value; null or blank clears it. Every problem is named in one 400 (each part starts with its field). Audited: what changed, before and after.',
        security: sessionSecurity,
        params: OrgParams,
        body: BrandingBody,
        response: { 200: BrandingView, ...portalErrors(400, 401, 403, 404) },
      },
    },
    async (request) => {
      const { orgId } = request.member;
      await saveBranding(db, orgId, request.body, member(request.portal.person.id));
      return getBranding(db, config.publicUrl, orgId);
    },
  );

  app.put(
    '/orgs/:orgId/branding/logo',
    {
      preValidation: [signedIn, requireMember(db, 'branding.manage')],
      bodyLimit: LOGO_BODY_LIMIT,
      schema: {
        tags,
        operationId: 'portalSetBrandingLogo',
        summary: 'Upload the logo: a PNG, JPEG or WebP (never SVG) of at most 2 MB, re-encoded to at most 512 px without its metadata',
        description: 'JSON with the file base64-encoded (the portal API takes JSON only, its CSRF defence). The type is read from the bytes, not the name.',
        security: sessionSecurity,
        params: OrgParams,
        body: Type.Object({ image: Type.String({ minLength: 1, maxLength: LOGO_BODY_LIMIT, description: 'The file\'s bytes, base64' }) }),
        response: { 200: BrandingView, ...portalErrors(400, 401, 403, 404) },
      },
    },
    async (request) => {
      const { orgId } = request.member;
      const encoded = request.body.image.replace(/^data:[^,]*;base64,/, '').replace(/\s+/g, '');
      if (!/^[A-Za-z0-9+/]*={0,2}$/.test(encoded) || encoded.length % 4 === 1) throw new ApiError('VALIDATION_ERROR', 'image must be the file\'s bytes in base64');
      await setLogo(db, store, orgId, Buffer.from(encoded, 'base64'), member(request.portal.person.id));
      return getBranding(db, config.publicUrl, orgId);
    },
  );

  app.delete(
    '/orgs/:orgId/branding/logo',
    {
      preValidation: [signedIn, requireMember(db, 'branding.manage')],
      schema: {
        tags,
        operationId: 'portalRemoveBrandingLogo',
        summary: 'Remove the logo: the flow shows the name alone',
        security: sessionSecurity,
        params: OrgParams,
        response: { 200: Done, ...portalErrors(401, 403, 404) },
      },
    },
    async (request) => {
      const removed = await removeLogo(db, store, request.member.orgId, member(request.portal.person.id));
      if (!removed) throw new ApiError('NOT_FOUND_ERROR', 'There is no logo to remove');
      return { ok: true as const };
    },
  );
}
