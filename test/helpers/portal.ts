import type { FastifyInstance, InjectOptions } from 'fastify';
import type { Kysely } from 'kysely';
import { generate } from 'otplib';
import { AccountsService, type CreatedOrganization } from '../../src/accounts/service.js';
import { createOperator } from '../../src/console/operators.js';
import type { DB } from '../../src/platform/db/schema.js';
import { insertPerson } from '../../src/portal/people.js';
import { createSession, SESSION_COOKIE } from '../../src/portal/sessions.js';
import type { Role } from '../../src/portal/tables.js';

/** What the portal tests send as the web app would: its Origin, JSON, and the session cookie. */
export const ORIGIN = 'http://127.0.0.1:8080';

export interface PortalUser {
  personId: string;
  email: string;
  password: string;
  cookie: string;
}

let counter = 0;

/** A person with a verified email and a signed-in session, made straight in the database. */
export async function portalUser(db: Kysely<DB>, input: { email?: string; name?: string; password?: string } = {}): Promise<PortalUser> {
  const email = input.email ?? `person${++counter}-${Date.now()}@example.com`;
  const password = input.password ?? 'correct horse battery';
  const personId = await insertPerson(db, { email, name: input.name ?? 'Test Person', password, verified: true });
  const { token } = await createSession(db, { personId });
  return { personId, email, password, cookie: `${SESSION_COOKIE}=${token}` };
}

export async function addMember(db: Kysely<DB>, orgId: string, personId: string, role: Role): Promise<void> {
  await db.insertInto('memberships').values({ org_id: orgId, person_id: personId, role }).execute();
}

export interface PortalOrg {
  org: CreatedOrganization;
  owner: PortalUser;
}

/** An organization (enabled, funded ₦1,000 unless told otherwise) with a signed-in owner. */
export async function portalOrg(db: Kysely<DB>, options: { enabled?: boolean; fund?: number; role?: Role } = {}): Promise<PortalOrg> {
  const org = await new AccountsService(db).create({
    name: `Portal Org ${++counter}`,
    enabled: options.enabled ?? true,
    riskLevel: 'NONE',
    payloadType: 'FULL',
    fund: options.fund ?? 100_000,
  });
  const owner = await portalUser(db);
  await addMember(db, org.id, owner.personId, options.role ?? 'owner');
  return { org, owner };
}

/** `app.inject` as the web app calls: same Origin, JSON body, the session cookie. */
export function portal(app: FastifyInstance, user: Pick<PortalUser, 'cookie'> | undefined, request: InjectOptions) {
  const headers: Record<string, string> = { origin: ORIGIN, ...(request.headers as Record<string, string> | undefined) };
  if (user) headers.cookie = user.cookie;
  if (request.payload !== undefined && !headers['content-type']) headers['content-type'] = 'application/json';
  // Each call from its own address, as many customers would: the per-IP sign-in limit counts per test.
  const remoteAddress = request.remoteAddress ?? `127.${Math.floor(Math.random() * 250)}.${Math.floor(Math.random() * 250)}.${1 + Math.floor(Math.random() * 250)}`;
  return app.inject({ ...request, headers, remoteAddress });
}

/**
 * A code of the person's authenticator app that the server has not seen yet: codes are refused
 * a second time, so when the current 30-second step was used, the next step's code (accepted
 * for clock drift) or, failing that, a wait for the step after.
 */
export async function freshCode(db: Kysely<DB>, personId: string, secret: string): Promise<string> {
  for (;;) {
    const { totp_last_step: last } = await db.selectFrom('people').select('totp_last_step').where('id', '=', personId).executeTakeFirstOrThrow();
    const current = Math.floor(Date.now() / 30_000);
    const step = last === null ? current : Math.max(current, last + 1);
    if (step <= current + 1) return generate({ secret, epoch: step * 30 });
    await new Promise((resolve) => setTimeout(resolve, (current + 1) * 30_000 - Date.now() + 50));
  }
}

/** Turns two-factor on for a signed-in person through the API; the secret and recovery codes. */
export async function enrolTotp(app: FastifyInstance, user: PortalUser, { origin = ORIGIN } = {}): Promise<{ secret: string; recoveryCodes: string[] }> {
  const headers = { origin };
  const setup = await portal(app, user, { method: 'POST', url: '/api/account/totp/setup', headers, payload: {} });
  if (setup.statusCode !== 200) throw new Error(`totp/setup answered ${setup.statusCode}: ${setup.body}`);
  const { secret } = setup.json() as { secret: string };
  const code = await generate({ secret });
  const enable = await portal(app, user, { method: 'POST', url: '/api/account/totp/enable', headers, payload: { password: user.password, code } });
  if (enable.statusCode !== 200) throw new Error(`totp/enable answered ${enable.statusCode}: ${enable.body}`);
  return { secret, recoveryCodes: (enable.json() as { recoveryCodes: string[] }).recoveryCodes };
}

/**
 * An operator made as `vouch operator create` makes one, who sets a password through the link,
 * signs in through the portal API and turns two-factor on (the console refuses operators without
 * it); the session cookie of that sign-in, and `totpSecret` for codes later. `origin`: the app's
 * public URL when it is not the helpers' default (a browser test's server).
 */
export async function operatorUser(app: FastifyInstance, db: Kysely<DB>, { origin = ORIGIN } = {}): Promise<PortalUser & { totpSecret: string }> {
  const email = `ops-${++counter}-${Date.now()}@vouch.example`;
  const created = await createOperator(db, { email, name: 'Ada Ops' }, origin);
  const token = new URL(created.signInLink).searchParams.get('token')!;
  const password = 'operator password 1';
  const headers = { origin };
  const reset = await portal(app, undefined, { method: 'POST', url: '/api/auth/reset-password', headers, payload: { token, password } });
  if (reset.statusCode !== 200) throw new Error(`reset-password answered ${reset.statusCode}: ${reset.body}`);
  const signIn = await portal(app, undefined, { method: 'POST', url: '/api/auth/sign-in', headers, payload: { email, password } });
  const cookie = signIn.cookies.find((c) => c.name === SESSION_COOKIE);
  if (!cookie) throw new Error(`sign-in answered ${signIn.statusCode}: ${signIn.body}`);
  const user = { personId: created.id, email, password, cookie: `${SESSION_COOKIE}=${cookie.value}` };
  const { secret } = await enrolTotp(app, user, { origin });
  return { ...user, totpSecret: secret };
}
