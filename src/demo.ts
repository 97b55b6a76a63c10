import { Readable } from 'node:stream';
import type { Kysely } from 'kysely';
import { AccountsService, type CreatedOrganization } from './accounts/service.js';
import { generateDemoRegistry } from './identities/registry/demo.js';
import { importRegistry } from './identities/registry/import.js';
import type { DB } from './platform/db/schema.js';

/** ₦100,000 of demo credit: enough for a good while of README examples. */
export const DEMO_FUNDING = 10_000_000;

export interface DemoSeed {
  organization: CreatedOrganization;
  registryRecords: number;
}

/**
 * On an empty database (first `npm start`), creates an enabled, funded demo organization and
 * loads the deterministic demo registry, so the README's sandbox and live examples work at once.
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
    email: 'admin@demo.example',
    riskLevel: 'LOW',
    payloadType: 'FULL',
    enabled: true,
    fund: DEMO_FUNDING,
  });
  return { organization, registryRecords: result.imported };
}
