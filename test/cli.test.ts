import fs from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { openDatabase } from '../src/platform/db/database.js';
import { cliJson, expectFailure, onPostgres, runCli, throwawayEnv, type CliEnv, type ThrowawayEnv } from './helpers/cli.js';

// Every case spawns `vouch` as built for the run (test/global-setup.ts): under a second of start-up, plus the embedded database's.
const SLOW = 60_000;
const PACKAGE_VERSION = (JSON.parse(await fs.readFile(new URL('../package.json', import.meta.url), 'utf8')) as { version: string }).version;

const ORG_KEYS = ['balance', 'enabled', 'id', 'liveSecret', 'name', 'payloadType', 'riskLevel', 'testSecret'];

const jsonl = (entries: unknown[]) => entries.map((entry) => (typeof entry === 'string' ? entry : JSON.stringify(entry))).join('\n');

// Good lines of several types, with two bad ones (lines 3 and 6).
const REGISTRY_FILE = jsonl([
  { type: 'bvn', record: { bvn: '22200000001', firstname: 'Emeka', lastname: 'Obi', gender: 'Male', phone: '08091112222', birthdate: '01-01-1980' } },
  { type: 'nin', record: { nin: '12100000001', firstname: 'Aisha', lastname: 'Bello', gender: 'Female', phone: '08031234500', birthdate: '05-06-1995' } },
  '{"type": "bvn", "record": {',
  { type: 'cac', record: { type: 'limited_company', rcNumber: 'RC 123', companyName: 'OBI VENTURES LIMITED', status: 'ACTIVE' } },
  { type: 'tin', record: { tin: '1111aaaa-0001', taxpayerName: 'OBI VENTURES' } },
  { type: 'bvn', record: { bvn: '123', firstname: 'Short', lastname: 'Number', gender: 'Male', phone: '08091112223', birthdate: '01-01-1980' } },
  { type: 'vnin', record: { id: 7, vNin: 'AB12CD34EF56GH78', firstname: 'Ngozi', lastname: 'Eze', birthdate: '21-07-1993', gender: 'F' } },
]);

/**
 * Commands that never open the database, started up front one after another in the background:
 * they overlap the database commands (which must run one at a time on the embedded database)
 * without crowding the machine.
 */
function startOffline(env: CliEnv) {
  let previous: Promise<unknown> = Promise.resolve();
  const run = (args: string[], extra: CliEnv = {}) => {
    const result = previous.then(() => runCli(args, { ...env, ...extra }));
    previous = result;
    return result;
  };
  const someId = '00000000-0000-4000-8000-000000000000';
  return {
    testIdentities: run(['test-identities', '--json']),
    fundAbc: run(['org', 'fund', someId, 'abc', '--json']),
    riskExtreme: run(['org', 'create', '--name', 'X', '--risk-level', 'EXTREME', '--json']),
    priceBogus: run(['price', 'set', 'bogus', '1', '--json']),
    missingFile: run(['registry', 'import', '/no/such/file', '--json']),
    badPort: run(['migrate', '--json'], { PORT: 'abc' }),
    badDatabaseUrl: run(['migrate', '--json'], { DATABASE_URL: 'mysql://x' }),
    unknownCommand: run(['bogus']),
    unknownOption: run(['test-identities', '--bogus']),
    misspelledOption: run(['test-identities', '--jsn']),
    missingArgument: run(['org', 'fund', '--json']),
    missingOption: run(['org', 'create', '--json']),
    help: run(['org', 'create', '--help']),
    version: run(['--version']),
  };
}

describe('vouch CLI', () => {
  let throwaway: ThrowawayEnv;
  let env: CliEnv;
  let offline: ReturnType<typeof startOffline>;
  let created: Record<string, unknown>;

  beforeAll(async () => {
    throwaway = await throwawayEnv({ fresh: true });
    env = throwaway.env;
    offline = startOffline(env);
  });
  afterAll(async () => {
    await throwaway?.cleanup();
  });

  it('migrate --json reports the migrations it applied', { timeout: SLOW }, async () => {
    const result = await cliJson<{ applied: string[] }>(['migrate', '--json'], env);
    if (onPostgres) {
      expect(result.applied).toContain('0001_foundation');
    } else {
      // A new embedded data folder starts from the build's migrated template: nothing left to apply.
      expect(result.applied).toEqual([]);
      const versions = await fs.readdir(path.join(inject('vouchBuild'), 'migrations'));
      const database = await openDatabase({ dataDir: path.join(env.VOUCH_DATA_DIR!, 'pglite') });
      try {
        const applied = await database.db.selectFrom('schema_migrations').select('version').orderBy('version').execute();
        expect(applied.map((row) => `${row.version}.sql`)).toEqual(versions.sort());
      } finally {
        await database.close();
      }
    }
    expect(await cliJson(['migrate', '--json'], env)).toEqual({ applied: [] });
  });

  describe('org', () => {
    it('create --json prints exactly the organization and its two secrets', { timeout: SLOW }, async () => {
      const args = ['org', 'create', '--name', 'Kolanut Ltd', '--email', 'ops@kolanut.example.com', '--risk-level', 'MEDIUM'];
      created = await cliJson([...args, '--payload-type', 'HALF', '--enable', '--fund', '5000', '--json'], env);
      expect(Object.keys(created).sort()).toEqual(ORG_KEYS);
      expect(created).toMatchObject({ name: 'Kolanut Ltd', riskLevel: 'MEDIUM', payloadType: 'HALF', enabled: true, balance: 5000 });
      expect(created.id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/);
      expect(created.testSecret).toMatch(/^sk_test_\S{20,}$/);
      expect(created.liveSecret).toMatch(/^sk_live_\S{20,}$/);
    });

    it('create without options: risk NONE, payload FULL, not enabled, empty wallet', { timeout: SLOW }, async () => {
      const plain = await cliJson(['org', 'create', '--name', 'Plain', '--json'], env);
      expect(Object.keys(plain).sort()).toEqual(ORG_KEYS);
      expect(plain).toMatchObject({ name: 'Plain', riskLevel: 'NONE', payloadType: 'FULL', enabled: false, balance: 0 });
      expect(plain.id).not.toBe(created.id);
    });

    it('enable sets the risk level and payload type', { timeout: SLOW }, async () => {
      const enabled = await cliJson(['org', 'enable', String(created.id), '--risk-level', 'HIGH', '--payload-type', 'FULL', '--json'], env);
      expect(enabled).toMatchObject({ id: created.id, riskLevel: 'HIGH', payloadType: 'FULL', enabled: true, balance: 5000 });
    });

    it('fund adds to the balance', { timeout: SLOW }, async () => {
      const funded = await cliJson(['org', 'fund', String(created.id), '2500', '--json'], env);
      expect(funded).toMatchObject({ id: created.id, balance: 7500 });
    });

    it('rotate-secret prints a new secret of that mode', { timeout: SLOW }, async () => {
      const rotated = await cliJson(['org', 'rotate-secret', String(created.id), '--mode', 'live', '--json'], env);
      expect(rotated).toMatchObject({ id: created.id, mode: 'live' });
      expect(rotated.secret).toMatch(/^sk_live_\S{20,}$/);
      expect(rotated.secret).not.toBe(created.liveSecret);
    });

    it('list prints every organization, oldest first, as an array with --json', { timeout: SLOW }, async () => {
      const listed = await cliJson<Record<string, unknown>[]>(['org', 'list', '--json'], env);
      expect(Array.isArray(listed)).toBe(true);
      const mine = listed.filter((org) => org.name === 'Kolanut Ltd' || org.name === 'Plain');
      expect(mine.map((org) => org.name)).toEqual(['Kolanut Ltd', 'Plain']);
      expect(Object.keys(mine[0]!).sort()).toEqual(['balance', 'email', 'enabled', 'id', 'name', 'payloadType', 'riskLevel']);
      const text = await runCli(['org', 'list'], env);
      expect(text.code).toBe(0);
      expect(text.stdout).toContain(`${String(created.id)}  Kolanut Ltd  risk=HIGH`);
      // No secret is ever listed.
      expect(text.stdout + JSON.stringify(listed)).not.toMatch(/sk_(test|live)_/);
    });

    it('show prints what the earlier commands stored', { timeout: SLOW }, async () => {
      const shown = await cliJson(['org', 'show', String(created.id), '--json'], env);
      expect(shown).toEqual({
        id: created.id,
        name: 'Kolanut Ltd',
        email: 'ops@kolanut.example.com',
        riskLevel: 'HIGH',
        payloadType: 'FULL',
        enabled: true,
        balance: 7500,
      });
    });
  });

  it('price set changes a price that price list then shows', { timeout: SLOW }, async () => {
    expect(await cliJson(['price', 'set', 'nin', '7000', '--json'], env)).toEqual({ type: 'nin', price: 7000 });
    const prices = await cliJson<Record<string, number>>(['price', 'list', '--json'], env);
    expect(prices.nin).toBe(7000);
    expect(Object.keys(prices)).toEqual(expect.arrayContaining(['bvn_basic', 'bvn_premium', 'nin', 'cac', 'tin']));
    for (const value of Object.values(prices)) expect(Number.isSafeInteger(value)).toBe(true);
  });

  describe('registry import', () => {
    let file: string;
    beforeAll(async () => {
      file = path.join(String(env.VOUCH_DATA_DIR), 'registry.jsonl');
      await fs.writeFile(file, REGISTRY_FILE);
    });

    it('stores the good lines, counts the bad ones and names their line numbers on stderr', { timeout: SLOW }, async () => {
      const result = await runCli(['registry', 'import', file, '--json'], env);
      expect(result.code, result.stderr).toBe(0);
      expect(JSON.parse(result.stdout)).toMatchObject({ imported: 5, rejected: 2 });
      expect(result.stderr).toMatch(/line 3\b/);
      expect(result.stderr).toMatch(/line 6\b/);
      expect(result.stderr).not.toMatch(/line [12457]\b/);
    });

    it('is idempotent: importing the same file again gives the same count', { timeout: SLOW }, async () => {
      expect(await cliJson(['registry', 'import', file, '--json'], env)).toMatchObject({ imported: 5, rejected: 2 });
    });

    it('reads standard input for "-"', { timeout: SLOW }, async () => {
      const goodLines = REGISTRY_FILE.split('\n').filter((_, index) => index !== 2 && index !== 5);
      expect(await cliJson(['registry', 'import', '-', '--json'], env, goodLines.join('\n'))).toMatchObject({ imported: 5, rejected: 0 });
    });
  });

  it('test-identities --json prints the sandbox identity of every type', { timeout: SLOW }, async () => {
    const result = await offline.testIdentities;
    expect(result.code, result.stderr).toBe(0);
    const identities = JSON.parse(result.stdout) as Record<string, Record<string, unknown>>;
    expect(Object.keys(identities).sort()).toEqual(['bvn', 'cac', 'drivers_license', 'nin', 'outcomes', 'screening', 'tin', 'vin', 'vnin']);
    // Beside the identities, the screening sandbox's fixed subjects: what each finds.
    const subjects = identities.screening as unknown as { subject: { name: string }; finds: string }[];
    expect(subjects.map((entry) => entry.subject.name)).toContain('Sandbox Clear Person');
    expect(subjects.find((entry) => entry.subject.name === 'Musa Adamu Karfe')?.finds).toMatch(/sanctions hit/);
    expect(identities.bvn?.bvn).toBe('22345678901');
    expect(identities.nin?.nin).toMatch(/^\d{11}$/);
    expect(identities.vnin?.vNin).toMatch(/^\w{16}$/);
    expect(identities.drivers_license?.licenseNo).toEqual(expect.any(String));
    expect(identities.vin?.vin).toMatch(/^\w{19}$/);
    expect(identities.cac?.rcNumber).toEqual(expect.any(String));
    expect(identities.cac?.type).toBe('limited_company');
    expect(identities.tin?.tin).toEqual(expect.any(String));
  });

  describe('failures: non-zero exit, one line on stderr, nothing on stdout', () => {
    it('an unknown organization id: exit code 3 (not found), JSON on stderr with --json', { timeout: SLOW }, async () => {
      const unknown = await runCli(['org', 'show', '00000000-0000-4000-8000-000000000000', '--json'], env);
      expectFailure(unknown, /no organization/);
      expect(unknown.code).toBe(3);
      expect(JSON.parse(unknown.stderr).error.kind).toBe('notFound');
      const plain = await runCli(['org', 'show', 'not-a-uuid'], env);
      expectFailure(plain, /^vouch: no organization with id not-a-uuid\n$/);
      expect(plain.code).toBe(3);
    });

    it('an amount that is not a whole number of kobo', { timeout: SLOW }, async () => {
      expectFailure(await offline.fundAbc, /'abc'.*whole number of kobo/);
    });

    it('a risk level that does not exist', { timeout: SLOW }, async () => {
      expectFailure(await offline.riskExtreme, /'EXTREME'.*NONE, LOW, MEDIUM, HIGH/);
    });

    it('a price for an unknown type', { timeout: SLOW }, async () => {
      expectFailure(await offline.priceBogus, /unknown type "bogus"/);
    });

    it('a registry file that does not exist', { timeout: SLOW }, async () => {
      expectFailure(await offline.missingFile, /no such file: \/no\/such\/file/);
    });

    it('a bad environment value, named', { timeout: SLOW }, async () => {
      expectFailure(await offline.badPort, /\bPORT\b.*"abc"/);
      expectFailure(await offline.badDatabaseUrl, /\bDATABASE_URL\b/);
    });

    it("commander's own parse errors, in the same form: one \"vouch: \" line (JSON with --json), exit code 2", { timeout: SLOW }, async () => {
      const cases: [Awaited<typeof offline.unknownCommand>, RegExp][] = [
        [await offline.unknownCommand, /^vouch: unknown command 'bogus'\n$/],
        [await offline.unknownOption, /^vouch: unknown option '--bogus'\n$/],
        [await offline.misspelledOption, /^vouch: unknown option '--jsn' \(Did you mean --json\?\)\n$/],
        [await offline.missingArgument, /^vouch: missing required argument 'id'\n$/],
        [await offline.missingOption, /^vouch: required option '--name <name>' not specified\n$/],
        [await offline.fundAbc, /^vouch: .*'abc'/],
      ];
      for (const [result, reason] of cases) {
        expectFailure(result, reason);
        expect(result.code, result.stderr).toBe(2);
      }
      // With --json, the failure is JSON on stderr.
      expect(JSON.parse((await offline.missingArgument).stderr)).toEqual({ error: { kind: 'usage', exitCode: 2, message: "missing required argument 'id'" } });
      // A bad environment value is a usage error too.
      expect((await offline.badPort).code).toBe(2);
    });

    it('--version prints the package version, exit code 0', { timeout: SLOW }, async () => {
      const version = await offline.version;
      expect(version.code).toBe(0);
      expect(version.stdout.trim()).toBe(PACKAGE_VERSION);
    });

    it('--help is not a failure: the help on stdout, exit code 0', { timeout: SLOW }, async () => {
      const help = await offline.help;
      expect(help.code).toBe(0);
      expect(help.stdout).toMatch(/^Usage: vouch org create/);
      expect(help.stderr).toBe('');
    });
  });
});
