import { randomBytes } from 'node:crypto';
import { Readable } from 'node:stream';
import type { Kysely } from 'kysely';
import { AccountsService, type CreatedOrganization } from './accounts/service.js';
import { generateDemoRegistry } from './identities/registry/demo.js';
import { importRegistry } from './identities/registry/import.js';
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
 */
export async function seedDemo(db: Kysely<DB>): Promise<DemoSeed | undefined> {
  const accounts = new AccountsService(db);
  if ((await accounts.count()) > 0) return undefined;
  const records = await generateDemoRegistry();
  const lines = records.map((entry) => JSON.stringify(entry));
  const result = await importRegistry(db, Readable.from([lines.join('\n')]));
  const organization = await accounts.create({
    name: 'Demo Company',
    email: DEMO_EMAIL,
    riskLevel: 'LOW',
    payloadType: 'FULL',
    enabled: true,
    fund: DEMO_FUNDING,
  });
  const password = randomBytes(12).toString('base64url');
  const personId = await insertPerson(db, { email: DEMO_EMAIL, name: 'Demo Admin', password, verified: true });
  await db.insertInto('memberships').values({ org_id: organization.id, person_id: personId, role: 'owner' }).execute();
  return { organization, registryRecords: result.imported, portal: { email: DEMO_EMAIL, password } };
}
