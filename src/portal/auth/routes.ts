import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import QRCode from 'qrcode';
import { Type } from 'typebox';
import { ApiError } from '../../platform/errors.js';
import { checkName } from '../../platform/input.js';
import { requireSession, sessionOf } from '../guard.js';
import type { AreaOptions } from '../plugin.js';
import { Done, PORTAL_TAG, portalErrors, sessionSecurity } from '../schemas.js';
import { revokeSession, SESSION_COOKIE, sessionCookie } from '../sessions.js';
import { LockedError } from './second-factor.js';
import { AuthService } from './service.js';
import { perIpLimit } from './throttle.js';

const tags = [PORTAL_TAG];
const Email = Type.String({ maxLength: 254, description: 'Email address' });
const Password = Type.String({ maxLength: 200 });
const Token = Type.String({ maxLength: 100, description: 'The token of the mailed link' });
const Code = Type.String({ maxLength: 20, description: 'A 6-digit code of the authenticator app, or a recovery code' });
const RecoveryCodes = Type.Object({
  recoveryCodes: Type.Array(Type.String(), { description: 'One-time codes to sign in without the app; shown this once, stored hashed' }),
});

/** Sends a locked account's Retry-After with its 429. */
async function untilUnlocked<T>(reply: FastifyReply, work: Promise<T>): Promise<T> {
  try {
    return await work;
  } catch (err) {
    if (err instanceof LockedError) reply.header('retry-after', String(err.retryAfter));
    throw err;
  }
}

/** Sign-up, sign-in, email verification, password reset, and the signed-in person's own security. */
/**
 * A sign-up's answer: `delivery` says where its message went: `email` (a mail server is set),
 * or `kept` (none is: the message waits in the server's mail log, which its operator reads with
 * `vouch mail list`, beside the running server too). The same for every address.
 */
const SignUpStarted = Type.Object({
  ok: Type.Literal(true),
  delivery: Type.Union([Type.Literal('email'), Type.Literal('kept')], { description: "email: mailed; kept: no mail server is set, the operator reads it with 'vouch mail list'" }),
});

export async function authRoutes(parent: FastifyInstance, { db, config, mail }: AreaOptions): Promise<void> {
  const app = parent.withTypeProvider<TypeBoxTypeProvider>();
  const auth = new AuthService(db, mail, config.publicUrl, app.log);
  app.addHook('onClose', () => auth.settle());
  // Guards run as preValidation: who may call is answered before the body is judged, and a
  // malformed attempt counts towards the per-IP limit like any other.
  const signedIn = requireSession(db);

  const client = (request: FastifyRequest) => ({ userAgent: request.headers['user-agent'], ip: request.ip });
  // One budget per client address across these routes: guessing passwords and filling mailboxes
  // cost alike. request.ip is the client's address behind the trusted proxies.
  const throttled = perIpLimit(db);
  const setCookie = (reply: FastifyReply, token: string) => reply.setCookie(SESSION_COOKIE, token, sessionCookie(config.publicUrl));

  app.post(
    '/auth/sign-up',
    {
      preValidation: throttled,
      schema: {
        tags,
        operationId: 'portalSignUp',
        summary: 'Start a sign-up: the address is mailed a link that finishes it (the answer is the same whether the address has an account or not)',
        description:
          'A new address is mailed a link to /complete-sign-up, where the password is chosen and the account and its organization are made. ' +
          'An address that already has an account is mailed a note to sign in or reset the password instead. No session is started here.',
        body: Type.Object({ name: Type.String({ maxLength: 120 }), email: Email, organizationName: Type.String({ maxLength: 120 }) }),
        response: { 202: SignUpStarted, ...portalErrors(400, 429) },
      },
    },
    async (request, reply) => {
      auth.signUp(request.body);
      // Where the message goes is the server's, the same for every address: the page can say it.
      return reply.status(202).send({ ok: true as const, delivery: config.smtpUrl ? ('email' as const) : ('kept' as const) });
    },
  );

  app.post(
    '/auth/complete-sign-up',
    {
      preValidation: throttled,
      schema: {
        tags,
        operationId: 'portalCompleteSignUp',
        summary: 'Finish a sign-up with the token of the mailed link and a password: the account and a new organization (not yet enabled for live API access), signed in',
        body: Type.Object({ token: Token, password: Password }),
        response: { 201: Type.Object({ personId: Type.String(), orgId: Type.String() }), ...portalErrors(400, 409, 429) },
      },
    },
    async (request, reply) => {
      const { personId, orgId, session } = await auth.completeSignUp(request.body.token, request.body.password, client(request));
      setCookie(reply, session.token);
      return reply.status(201).send({ personId, orgId });
    },
  );

  app.post(
    '/auth/sign-in',
    {
      preValidation: throttled,
      schema: {
        tags,
        operationId: 'portalSignIn',
        summary: 'Sign in with email and password; with two-factor on, the code follows at /api/auth/totp',
        body: Type.Object({ email: Email, password: Password }),
        response: { 200: Type.Object({ totpRequired: Type.Boolean() }), ...portalErrors(400, 401, 429) },
      },
    },
    async (request, reply) => {
      const { session, totpRequired } = await untilUnlocked(reply, auth.signIn(request.body, client(request)));
      setCookie(reply, session.token);
      return { totpRequired };
    },
  );

  app.post(
    '/auth/totp',
    {
      preValidation: throttled,
      schema: {
        tags,
        operationId: 'portalSignInTotp',
        summary: 'Finish a sign-in with the 6-digit code of the authenticator app, or a recovery code',
        description: 'Five wrong codes in a row lock the second step for 15 minutes (each further five, twice as long) and end the waiting sign-in.',
        security: sessionSecurity,
        body: Type.Object({ code: Code }),
        response: { 200: Done, ...portalErrors(400, 401, 429) },
      },
    },
    async (request, reply) => {
      const session = await sessionOf(db, request);
      if (!session) throw new ApiError('ACCESS_DENIED', 'Sign in with your password first: the sign-in waited too long for its code');
      if (!session.pendingTotp) return { ok: true as const };
      await untilUnlocked(reply, auth.completeTotp(session.sessionId, session.person.id, request.body.code));
      return { ok: true as const };
    },
  );

  app.post(
    '/auth/sign-out',
    {
      schema: {
        tags,
        operationId: 'portalSignOut',
        summary: 'End this session',
        description: "Succeeds signed in or not. Like every state-changing /api call, one without the web app's Origin is 403.",
        security: sessionSecurity,
        response: { 200: Done, ...portalErrors(403) },
      },
    },
    async (request, reply) => {
      const session = await sessionOf(db, request);
      if (session) await revokeSession(db, session.person.id, session.sessionId);
      reply.clearCookie(SESSION_COOKIE, { path: '/' });
      return { ok: true as const };
    },
  );

  app.post(
    '/auth/verify-email',
    {
      preValidation: throttled,
      schema: {
        tags,
        operationId: 'portalVerifyEmail',
        summary: 'Confirm an email address with the token of the mailed link',
        body: Type.Object({ token: Token }),
        response: { 200: Done, ...portalErrors(400, 429) },
      },
    },
    async (request) => {
      await auth.verifyEmail(request.body.token);
      return { ok: true as const };
    },
  );

  app.post(
    '/auth/resend-verification',
    {
      preValidation: [throttled, signedIn],
      schema: {
        tags,
        operationId: 'portalResendVerification',
        summary: 'Mail a new email-verification link',
        security: sessionSecurity,
        response: { 200: Done, ...portalErrors(401, 409, 429) },
      },
    },
    async (request) => {
      await auth.resendVerification(request.portal.person.id);
      return { ok: true as const };
    },
  );

  app.post(
    '/auth/forgot-password',
    {
      preValidation: throttled,
      schema: {
        tags,
        operationId: 'portalForgotPassword',
        summary: 'Mail a password-reset link (the answer is the same whether the address has an account or not)',
        body: Type.Object({ email: Email }),
        response: { 200: Done, ...portalErrors(400, 429) },
      },
    },
    async (request) => {
      auth.forgotPassword(request.body.email);
      return { ok: true as const };
    },
  );

  app.post(
    '/auth/reset-password',
    {
      preValidation: throttled,
      schema: {
        tags,
        operationId: 'portalResetPassword',
        summary: 'Set a new password with the token of the mailed link; every session ends',
        description: 'With two-factor on, `code` (of the app, or a recovery code) is required too. Every other reset link of the person stops working.',
        body: Type.Object({ token: Token, password: Password, code: Type.Optional(Code) }),
        response: { 200: Done, ...portalErrors(400, 429) },
      },
    },
    async (request, reply) => {
      await untilUnlocked(reply, auth.resetPassword(request.body.token, request.body.password, request.body.code));
      return { ok: true as const };
    },
  );

  // The signed-in person's own account.
  const SessionRow = Type.Object({
    id: Type.String(),
    createdAt: Type.String({ format: 'date-time' }),
    lastSeenAt: Type.String({ format: 'date-time' }),
    userAgent: Type.Union([Type.String(), Type.Null()]),
    ip: Type.Union([Type.String(), Type.Null()]),
    current: Type.Boolean(),
  });

  app.get(
    '/account/sessions',
    {
      preValidation: signedIn,
      schema: {
        tags,
        operationId: 'portalListSessions',
        summary: 'The devices signed in to this account',
        security: sessionSecurity,
        response: { 200: Type.Object({ data: Type.Array(SessionRow) }), ...portalErrors(401) },
      },
    },
    async (request) => {
      const rows = await db
        .selectFrom('portal_sessions')
        .select(['id', 'created_at', 'last_seen_at', 'user_agent', 'ip'])
        .where('person_id', '=', request.portal.person.id)
        .where('revoked_at', 'is', null)
        .where('pending_totp', '=', false)
        .where('expires_at', '>', new Date())
        .orderBy('last_seen_at', 'desc')
        .limit(100)
        .execute();
      return {
        data: rows.map((row) => ({
          id: row.id,
          createdAt: row.created_at.toISOString(),
          lastSeenAt: row.last_seen_at.toISOString(),
          userAgent: row.user_agent,
          ip: row.ip,
          current: row.id === request.portal.sessionId,
        })),
      };
    },
  );

  app.delete(
    '/account/sessions/:sessionId',
    {
      preValidation: signedIn,
      schema: {
        tags,
        operationId: 'portalRevokeSession',
        summary: 'Sign out one device (this one too: then the cookie is cleared)',
        security: sessionSecurity,
        params: Type.Object({ sessionId: Type.String({ maxLength: 64 }) }),
        response: { 200: Done, ...portalErrors(401, 404) },
      },
    },
    async (request, reply) => {
      const { sessionId } = request.params;
      const ok = /^[0-9a-f-]{36}$/i.test(sessionId) && (await revokeSession(db, request.portal.person.id, sessionId));
      if (!ok) throw new ApiError('NOT_FOUND_ERROR', 'No such signed-in device on your account');
      if (sessionId === request.portal.sessionId) reply.clearCookie(SESSION_COOKIE, { path: '/' });
      return { ok: true as const };
    },
  );

  app.patch(
    '/account',
    {
      preValidation: signedIn,
      schema: {
        tags,
        operationId: 'portalUpdateAccount',
        summary: 'Change your name',
        security: sessionSecurity,
        body: Type.Object({ name: Type.String({ minLength: 1, maxLength: 120 }) }),
        response: { 200: Done, ...portalErrors(400, 401) },
      },
    },
    async (request) => {
      const name = request.body.name.trim();
      if (!name) throw new ApiError('VALIDATION_ERROR', 'name must not be empty');
      checkName(name, 'name');
      await db.updateTable('people').set({ name }).where('id', '=', request.portal.person.id).execute();
      return { ok: true as const };
    },
  );

  app.post(
    '/account/password',
    {
      preValidation: signedIn,
      schema: {
        tags,
        operationId: 'portalChangePassword',
        summary: 'Change your password; your other devices are signed out',
        security: sessionSecurity,
        body: Type.Object({ currentPassword: Password, newPassword: Password }),
        response: { 200: Done, ...portalErrors(400, 401, 429) },
      },
    },
    async (request, reply) => {
      await untilUnlocked(reply, auth.changePassword(request.portal.person.id, request.portal.sessionId, request.body.currentPassword, request.body.newPassword));
      return { ok: true as const };
    },
  );

  app.post(
    '/account/totp/setup',
    {
      preValidation: signedIn,
      schema: {
        tags,
        operationId: 'portalSetupTotp',
        summary: 'Start two-factor setup: a secret and its QR code for an authenticator app',
        security: sessionSecurity,
        response: { 200: Type.Object({ secret: Type.String(), otpauthUrl: Type.String(), qrDataUrl: Type.String() }), ...portalErrors(401, 409) },
      },
    },
    async (request) => {
      const { secret, otpauthUrl } = await auth.setupTotp(request.portal.person.id, request.portal.person.email);
      return { secret, otpauthUrl, qrDataUrl: await QRCode.toDataURL(otpauthUrl, { margin: 1, width: 220 }) };
    },
  );

  app.post(
    '/account/totp/enable',
    {
      preValidation: signedIn,
      schema: {
        tags,
        operationId: 'portalEnableTotp',
        summary: 'Turn two-factor on with your password and a code from the app; your other devices are signed out',
        description: 'The answer carries ten one-time recovery codes, shown this once.',
        security: sessionSecurity,
        body: Type.Object({ password: Password, code: Code }),
        response: { 200: RecoveryCodes, ...portalErrors(400, 401, 409, 429) },
      },
    },
    async (request, reply) => {
      const { person, sessionId } = request.portal;
      return { recoveryCodes: await untilUnlocked(reply, auth.enableTotp(person.id, sessionId, request.body.password, request.body.code)) };
    },
  );

  app.post(
    '/account/totp/recovery-codes',
    {
      preValidation: signedIn,
      schema: {
        tags,
        operationId: 'portalRegenerateRecoveryCodes',
        summary: 'New recovery codes (password and a current code); the old ones stop working',
        security: sessionSecurity,
        body: Type.Object({ password: Password, code: Code }),
        response: { 200: RecoveryCodes, ...portalErrors(400, 401, 429) },
      },
    },
    async (request, reply) => {
      return { recoveryCodes: await untilUnlocked(reply, auth.regenerateRecoveryCodes(request.portal.person.id, request.portal.sessionId, request.body.password, request.body.code)) };
    },
  );

  app.post(
    '/account/totp/disable',
    {
      preValidation: signedIn,
      schema: {
        tags,
        operationId: 'portalDisableTotp',
        summary: 'Turn two-factor off (password and a current code or a recovery code)',
        security: sessionSecurity,
        body: Type.Object({ password: Password, code: Code }),
        response: { 200: Done, ...portalErrors(400, 401, 409, 429) },
      },
    },
    async (request, reply) => {
      await untilUnlocked(reply, auth.disableTotp(request.portal.person.id, request.portal.sessionId, request.body.password, request.body.code));
      return { ok: true as const };
    },
  );
}
