import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance } from 'fastify';
import QRCode from 'qrcode';
import { Type } from 'typebox';
import { logSessionAccess } from '../../access-log/service.js';
import { checkCreateLink, createLink, editLink, findLink, linkNotFound, listLinks, MAX_SESSION_LIMIT, renderLink, setLinkDisabled, type LinkView } from '../../sessions/links/service.js';
import { MAX_SPEND_LIMIT, spendsOf, type LinkSpend } from '../../sessions/links/spend.js';
import type { LinkRow } from '../../sessions/links/tables.js';
import { audit, type Actor } from '../audit.js';
import { modeOf, requireMember, requireMemberSession, requireSession } from '../guard.js';
import type { AreaOptions } from '../plugin.js';
import { Nullable, OrgParams, PORTAL_TAG, PortalPage, portalErrors, sessionSecurity } from '../schemas.js';

const tags = [PORTAL_TAG];
const Mode = Type.Union([Type.Literal('test'), Type.Literal('live')]);

const Link = Type.Object({
  id: Type.String({ description: 'vl_...' }),
  name: Type.String(),
  mode: Mode,
  url: Type.String({ description: 'The public link to share (and encode in the QR code): ${PUBLIC_URL}/l/<code>' }),
  idTypes: Type.Array(Type.Union([Type.Literal('BVN'), Type.Literal('NIN'), Type.Literal('VNIN'), Type.Literal('DRIVERS_LICENSE')])),
  checks: Type.Object({ liveness: Type.Boolean(), faceMatch: Type.Boolean() }),
  redirectUrl: Nullable(Type.String()),
  referencePrefix: Nullable(Type.String({ description: "Each session's reference is this prefix, a dash and 12 random hex digits; null: generated vsr_ references" })),
  metadata: Type.Record(Type.String(), Type.String()),
  sessionLimit: Type.Integer(),
  sessionsStarted: Type.Integer(),
  spendLimit: Type.Union([Type.Integer(), Type.Null()], { description: "The cap, in kobo, on what the link's sessions may cost in all; null: no cap" }),
  spent: Type.Integer({ description: "What the link's sessions have paid, in kobo (each pays the session price with its first ID lookup; always 0 in test mode)" }),
  expiresAt: Type.String({ format: 'date-time' }),
  disabledAt: Nullable(Type.String({ format: 'date-time' })),
  createdAt: Type.String({ format: 'date-time' }),
  qrCode: Type.String({ description: "The link's QR code: an SVG image as a data: URL (a PNG is at .../qr.png)" }),
  status: Type.Union([Type.Literal('active'), Type.Literal('disabled'), Type.Literal('expired'), Type.Literal('full'), Type.Literal('spent')], {
    description: 'What a visitor gets now: active starts sessions; disabled, expired, full and spent (the spend cap cannot pay one more session) show a page saying so',
  }),
});

const LinkParams = Type.Object({ orgId: Type.String(), linkId: Type.String({ maxLength: 40 }) });
const ListQuery = Type.Object({
  mode: Type.Optional(Mode),
  limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 100, default: 20 })),
  offset: Type.Optional(Type.Integer({ minimum: 0, maximum: 1_000_000, default: 0 })),
});
const ModeOnly = Type.Object({ mode: Type.Optional(Mode) });

const CreateBody = Type.Object({
  name: Type.String({ maxLength: 1000, description: 'Seen by your team only' }),
  idTypes: Type.Optional(Type.Array(Type.String({ maxLength: 40 }), { maxItems: 10, description: 'BVN, NIN, VNIN, DRIVERS_LICENSE; all four when absent' })),
  checks: Type.Optional(Type.Object({ liveness: Type.Optional(Type.Boolean()), faceMatch: Type.Optional(Type.Boolean()) })),
  redirectUrl: Type.Optional(Type.String({ maxLength: 4096 })),
  sessionLimit: Type.Integer({ description: 'How many sessions the link may start in all (1 to 100,000)' }),
  expiresAt: Type.String({ maxLength: 64, description: 'When the link stops starting sessions: ISO 8601 with a time zone, within 366 days' }),
  referencePrefix: Type.Optional(Type.String({ maxLength: 200 })),
  metadata: Type.Optional(Type.Record(Type.String(), Type.Unknown(), { description: 'Copied to each session (with verificationLink: the link id); not for personal data' })),
  spendLimit: Type.Optional(Type.Union([Type.Integer(), Type.Null()], { description: `The cap, in kobo, on what the link's sessions may cost in all (each live session pays the session price with its first ID lookup): 1 to ${MAX_SPEND_LIMIT}; an ID step that would pass it is refused with 402, nothing looked up. Absent or null: no cap` })),
});

const EditBody = Type.Object({
  name: Type.Optional(Type.String({ maxLength: 1000, description: 'Seen by your team only' })),
  sessionLimit: Type.Optional(Type.Integer({ description: `How many sessions the link may start in all: 1 to ${MAX_SESSION_LIMIT}, and not below the sessions already started (equal to them: no more starts)` })),
  expiresAt: Type.Optional(Type.String({ maxLength: 64, description: 'ISO 8601 with a time zone, in the future and within 366 days' })),
  redirectUrl: Type.Optional(Nullable(Type.String({ maxLength: 4096, description: 'null or blank: none' }))),
  referencePrefix: Type.Optional(Nullable(Type.String({ maxLength: 200, description: 'null or blank: generated vsr_ references' }))),
  metadata: Type.Optional(Type.Record(Type.String(), Type.Unknown(), { description: 'Replaces the metadata copied to each new session; {} clears it' })),
  spendLimit: Type.Optional(Type.Union([Type.Integer(), Type.Null()], { description: "The cap, in kobo, on what the link's sessions may cost in all; not below what they have already paid (equal to it: no more paid ID steps); null: no cap" })),
});

const LinkSession = Type.Object({
  id: Type.String({ description: 'ses_...' }),
  reference: Type.String(),
  status: Type.Union([Type.Literal('created'), Type.Literal('in_progress'), Type.Literal('verified'), Type.Literal('failed'), Type.Literal('expired'), Type.Literal('cancelled')]),
  createdAt: Type.String({ format: 'date-time' }),
});

/** What the audit log keeps of a link: its settings, never more. */
function audited(view: LinkView) {
  const { url: _url, status: _status, createdAt: _created, spent: _spent, ...rest } = view;
  return rest;
}

/** The spend an audited view is drawn with: the audit keeps neither what was spent nor the status. */
const UNSPENT: LinkSpend = { spent: 0, price: 0 };

/** The audit's before and after of an edit: only the settings that changed. */
function changedSettings(before: LinkView, after: LinkView) {
  const was: Record<string, unknown> = {};
  const is: Record<string, unknown> = {};
  const old = audited(before) as Record<string, unknown>;
  for (const [key, value] of Object.entries(audited(after))) {
    if (JSON.stringify(value) !== JSON.stringify(old[key])) {
      was[key] = old[key];
      is[key] = value;
    }
  }
  return { before: was, after: is };
}

/** A link as the portal shows it: with its QR code, an SVG drawn here (nothing leaves for a third-party service). */
async function withQrCode(view: LinkView) {
  const svg = await QRCode.toString(view.url, { type: 'svg', margin: 2, errorCorrectionLevel: 'M' });
  return { ...view, qrCode: `data:image/svg+xml;base64,${Buffer.from(svg).toString('base64')}` };
}

/**
 * Verification links in the portal (docs/sessions.md, "Verification links"): list (anyone who reads
 * verifications), create, edit, disable and enable (owners, admins, developers: `verifications.write`).
 * Scoped to the organization of the path and the mode of the query; every change is audited.
 */
export async function linkRoutes(parent: FastifyInstance, { db, config }: AreaOptions): Promise<void> {
  const app = parent.withTypeProvider<TypeBoxTypeProvider>();
  const signedIn = requireSession(db);
  const member = (personId: string): Actor => ({ kind: 'member', personId });
  const view = (row: LinkRow, spend: LinkSpend = UNSPENT) => renderLink(row, config.publicUrl, spend);
  /** A link as answered: with what its sessions paid, its status by its spend cap, and its QR code. */
  const shown = async (row: LinkRow) => withQrCode(view(row, (await spendsOf(db, row.mode, [row]))(row)));

  app.get(
    '/orgs/:orgId/links',
    {
      preValidation: [requireMemberSession(db, 'verifications.read')],
      schema: {
        tags,
        operationId: 'portalListLinks',
        summary: "The mode's verification links, newest first, with sessions started and their limit",
        security: sessionSecurity,
        params: OrgParams,
        querystring: ListQuery,
        response: { 200: PortalPage(Link), ...portalErrors(400, 401, 403, 404) },
      },
    },
    async (request) => {
      const paging = { limit: request.query.limit ?? 20, offset: request.query.offset ?? 0 };
      const mode = modeOf(request.query);
      const { rows, total } = await listLinks(db, { orgId: request.member.orgId, mode }, paging);
      const spend = await spendsOf(db, mode, rows);
      return { data: await Promise.all(rows.map((row) => withQrCode(view(row, spend(row))))), total, ...paging };
    },
  );

  app.post(
    '/orgs/:orgId/links',
    {
      preValidation: [signedIn, requireMember(db, 'verifications.write')],
      schema: {
        tags,
        operationId: 'portalCreateLink',
        summary: 'Create a verification link of the mode: a public URL (and QR code) where each visitor can start a session',
        description: 'Every problem of the body is named in one 400. An account whose risk level needs applicant details on each session cannot make links. Audited.',
        security: sessionSecurity,
        params: OrgParams,
        querystring: ModeOnly,
        body: CreateBody,
        response: { 201: Link, ...portalErrors(400, 401, 403, 404) },
      },
    },
    async (request, reply) => {
      const scope = { orgId: request.member.orgId, mode: modeOf(request.query) };
      const org = await db.selectFrom('organizations').select('risk_level').where('id', '=', scope.orgId).executeTakeFirstOrThrow();
      const checked = checkCreateLink(request.body, { riskLevel: org.risk_level, now: new Date() });
      const created = await db.transaction().execute(async (trx) => {
        const row = await createLink(trx, scope, checked, { createdBy: request.portal.person.id });
        await audit(trx, { orgId: scope.orgId, actor: member(request.portal.person.id), action: 'link.created', target: `${scope.mode} link ${row.public_id}`, after: audited(view(row)) });
        return row;
      });
      return reply.status(201).send(await shown(created));
    },
  );

  app.patch(
    '/orgs/:orgId/links/:linkId',
    {
      preValidation: [signedIn, requireMember(db, 'verifications.write')],
      schema: {
        tags,
        operationId: 'portalEditLink',
        summary: "Change a verification link's name, session limit, spend cap, expiry, redirect URL, reference prefix or metadata; sessions already started keep theirs",
        description: 'A field left out keeps its value. Every problem of the body is named in one 400, with the rules of creation; the limit may not go below the sessions already started, nor the spend cap below what they have paid. Audited with what changed, before and after.',
        security: sessionSecurity,
        params: LinkParams,
        querystring: ModeOnly,
        body: EditBody,
        response: { 200: Link, ...portalErrors(400, 401, 403, 404) },
      },
    },
    async (request) => {
      const scope = { orgId: request.member.orgId, mode: modeOf(request.query) };
      return db.transaction().execute(async (trx) => {
        const changed = await editLink(trx, scope, request.params.linkId, request.body);
        if (!changed) throw linkNotFound();
        if (changed.before !== changed.after) {
          await audit(trx, {
            orgId: scope.orgId,
            actor: member(request.portal.person.id),
            action: 'link.updated',
            target: `${scope.mode} link ${changed.after.public_id}`,
            ...changedSettings(view(changed.before), view(changed.after)),
          });
        }
        return changed.after;
      }).then(shown);
    },
  );

  for (const [verb, disabled] of [
    ['disable', true],
    ['enable', false],
  ] as const) {
    app.post(
      `/orgs/:orgId/links/:linkId/${verb}`,
      {
        preValidation: [signedIn, requireMember(db, 'verifications.write')],
        schema: {
          tags,
          operationId: disabled ? 'portalDisableLink' : 'portalEnableLink',
          summary: disabled
            ? 'Turn a verification link off: visitors see a page saying so and no session starts; sessions already started go on'
            : 'Turn a verification link back on (it still stops at its expiry and limit)',
          description: 'Audited when it changes something; asking twice is not an error.',
          security: sessionSecurity,
          params: LinkParams,
          querystring: ModeOnly,
          response: { 200: Link, ...portalErrors(400, 401, 403, 404) },
        },
      },
      async (request) => {
        const scope = { orgId: request.member.orgId, mode: modeOf(request.query) };
        return db.transaction().execute(async (trx) => {
          const changed = await setLinkDisabled(trx, scope, request.params.linkId, disabled);
          if (!changed) throw linkNotFound();
          if (changed.before !== changed.after) {
            await audit(trx, {
              orgId: scope.orgId,
              actor: member(request.portal.person.id),
              action: disabled ? 'link.disabled' : 'link.enabled',
              target: `${scope.mode} link ${changed.after.public_id}`,
              before: { disabledAt: changed.before.disabled_at?.toISOString() ?? null },
              after: { disabledAt: changed.after.disabled_at?.toISOString() ?? null },
            });
          }
          return changed.after;
        }).then(shown);
      },
    );
  }

  app.get(
    '/orgs/:orgId/links/:linkId/qr.png',
    {
      preValidation: [requireMemberSession(db, 'verifications.read')],
      schema: {
        tags,
        operationId: 'portalGetLinkQrPng',
        summary: "The link's QR code as a PNG to download (1024 pixels square), for posters and print",
        security: sessionSecurity,
        params: LinkParams,
        querystring: ModeOnly,
        response: { 200: Type.Any({ description: 'image/png' }), ...portalErrors(400, 401, 403, 404) },
      },
    },
    async (request, reply) => {
      const link = await findLink(db, { orgId: request.member.orgId, mode: modeOf(request.query) }, request.params.linkId);
      if (!link) throw linkNotFound();
      const png = await QRCode.toBuffer(view(link).url, { type: 'png', width: 1024, margin: 2, errorCorrectionLevel: 'M' });
      return reply
        .type('image/png')
        .header('cache-control', 'no-store')
        .header('content-disposition', `attachment; filename="verification-link-${link.public_id}.png"`)
        .send(png);
    },
  );

  app.get(
    '/orgs/:orgId/links/:linkId/sessions',
    {
      preValidation: [requireMemberSession(db, 'verifications.read')],
      schema: {
        tags,
        operationId: 'portalListLinkSessions',
        summary: 'The sessions a verification link started, newest first: id, reference, status and when',
        security: sessionSecurity,
        params: LinkParams,
        querystring: ListQuery,
        response: { 200: PortalPage(LinkSession), ...portalErrors(400, 401, 403, 404) },
      },
    },
    async (request) => {
      const scope = { orgId: request.member.orgId, mode: modeOf(request.query) };
      const link = await findLink(db, scope, request.params.linkId);
      if (!link) throw linkNotFound();
      const paging = { limit: request.query.limit ?? 20, offset: request.query.offset ?? 0 };
      const base = db
        .selectFrom('verification_sessions')
        .where('link_id', '=', Number(link.id))
        .where('org_id', '=', scope.orgId)
        .where('mode', '=', scope.mode);
      const [rows, count] = await Promise.all([
        base.select(['id', 'public_id', 'reference', 'status', 'created_at']).orderBy('id', 'desc').limit(paging.limit).offset(paging.offset).execute(),
        base.select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow(),
      ]);
      await logSessionAccess(db, request, scope, 'session', 'list', rows.map((row) => row.public_id));
      return {
        data: rows.map((row) => ({ id: row.public_id, reference: row.reference, status: row.status, createdAt: row.created_at.toISOString() })),
        total: Number(count.n),
        ...paging,
      };
    },
  );
}
