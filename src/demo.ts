import { randomBytes, randomUUID } from 'node:crypto';
import { Readable } from 'node:stream';
import { sql, type Kysely } from 'kysely';
import { AccountsService, type CreatedOrganization } from './accounts/service.js';
import { generateDemoRegistry } from './identities/registry/demo.js';
import { importRegistry } from './identities/registry/import.js';
import { credit } from './platform/billing.js';
import type { DB } from './platform/db/schema.js';
import { insertPerson } from './portal/people.js';

/** ₦100,000 of demo credit: enough for a good while of README examples. */
export const DEMO_FUNDING = 10_000_000;

/** The demo organization's owner in the portal. */
export const DEMO_EMAIL = 'admin@demo.example';

export interface DemoSeed {
  organization: CreatedOrganization;
  registryRecords: number;
  /** The portal sign-in of the demo organization's owner; the password is shown once. */
  portal: { email: string; password: string };
}

/**
 * On an empty database (first `npm start`), creates an enabled, funded demo organization and
 * loads the deterministic demo registry, so the README's sandbox and live examples work at once,
 * with an owner who can sign in to the portal.
 * Returns undefined when the database already has an organization.
 *
 * One transaction under an advisory lock: servers started together on one PostgreSQL make one
 * demo between them (each made its own, and the second's owner failed on the first's email,
 * leaving a funded organization without one); the one that waited finds it made and returns
 * undefined (the secrets are its maker's to print), and nobody sees half a demo.
 */
export async function seedDemo(db: Kysely<DB>): Promise<DemoSeed | undefined> {
  const records = await generateDemoRegistry();
  return db.transaction().execute(async (trx) => {
    await sql`select pg_advisory_xact_lock(hashtextextended('vouch demo seed', 0))`.execute(trx);
    const accounts = new AccountsService(trx);
    if ((await accounts.count()) > 0) return undefined;
    const lines = records.map((entry) => JSON.stringify(entry));
    const result = await importRegistry(trx, Readable.from([lines.join('\n')]));
    const id = randomUUID();
    const secrets = await accounts.insert(trx, id, { name: 'Demo Company', email: DEMO_EMAIL, riskLevel: 'LOW', payloadType: 'FULL', enabled: true });
    await credit(trx, id, DEMO_FUNDING, 'initial funding');
    const password = randomBytes(12).toString('base64url');
    const personId = await insertPerson(trx, { email: DEMO_EMAIL, name: 'Demo Admin', password, verified: true });
    await trx.insertInto('memberships').values({ org_id: id, person_id: personId, role: 'owner' }).execute();
    const organization = { ...(await accounts.get(id)), testSecret: secrets.test, liveSecret: secrets.live };
    return { organization, registryRecords: result.imported, portal: { email: DEMO_EMAIL, password } };
  });
}
