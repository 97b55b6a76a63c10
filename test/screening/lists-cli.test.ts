import { copyFile, mkdtemp, rm } from 'node:fs/promises';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cliJson, expectFailure, runCli, throwawayEnv, type ThrowawayEnv } from '../helpers/cli.js';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const FIXTURES = path.join(ROOT, 'test/fixtures/screening');
const SLOW = 300_000;

type Status = { name: string; format: string; url: string | null; version: number; entities: number; loadedAt: string | null; lastSuccessAt: string | null; lastFailureAt: string | null; lastError: string | null; nextSyncAt: string | null; every: string | null };

/** `vouch lists ...` as an operator runs it (a built `vouch`, its own database). */
describe('vouch lists', () => {
  let throwaway: ThrowawayEnv;
  let folder: string;
  const env = () => throwaway.env;

  beforeAll(async () => {
    throwaway = await throwawayEnv();
    folder = await mkdtemp(path.join(os.tmpdir(), 'vouch-lists-'));
  });
  afterAll(async () => {
    await throwaway?.cleanup();
    if (folder) await rm(folder, { recursive: true, force: true });
  });

  it('imports each format and prints the contract JSON; an unchanged file makes no version', { timeout: SLOW }, async () => {
    const imports: [string, string, string][] = [
      ['ng', 'csv', 'lists/v1.csv'],
      ['uk', 'uk-csv', 'uk/uk-sanctions-list.csv'],
      ['eu', 'eu-xml', 'eu/eu-sanctions.xml'],
      ['ofac', 'ofac-csv', 'ofac/sdn.csv'],
    ];
    for (const [source, format, file] of imports) {
      const out = await cliJson(['lists', 'import', path.join(FIXTURES, file), '--source', source, '--format', format, '--json'], env());
      expect(Object.keys(out)).toEqual(['source', 'version', 'entities', 'added', 'removed', 'changed']);
      expect(out).toMatchObject({ source, version: 1, removed: 0, changed: 0 });
      expect(out.added).toBe(out.entities);
      expect(out.entities).toBeGreaterThan(0);
    }
    const second = await cliJson(['lists', 'import', path.join(FIXTURES, 'lists/v2.csv'), '--source', 'ng', '--format', 'csv', '--json'], env());
    expect(second).toEqual({ source: 'ng', version: 2, entities: 5, added: 1, removed: 1, changed: 1 });
    const again = await runCli(['lists', 'import', path.join(FIXTURES, 'lists/v2.csv'), '--source', 'ng', '--format', 'csv'], env());
    expect(again.stdout).toBe('ng: unchanged, version 2 (5 entities) keeps serving\n');
  });

  it('refuses a bad line, a shrinking list, a missing companion and a bad format with one line and exit 1', { timeout: SLOW }, async () => {
    expectFailure(await runCli(['lists', 'import', path.join(FIXTURES, 'lists/bad-line.csv'), '--source', 'ng', '--format', 'csv', '--json'], env()), /^vouch: ng: the csv file is not valid: line 4: .*nothing was changed\n$/);
    expectFailure(
      await runCli(['lists', 'import', path.join(FIXTURES, 'lists/shrunk.csv'), '--source', 'ng', '--format', 'csv'], env()),
      /^vouch: ng: the new file has 2 entities where version 2 has 5: 3 would go, more than half of the list; nothing was changed \(pass --force if that is right\)\n$/,
    );
    // sdn.csv alone, without alt.csv and add.csv beside it.
    await copyFile(path.join(FIXTURES, 'ofac/sdn.csv'), path.join(folder, 'sdn.csv'));
    expectFailure(await runCli(['lists', 'import', path.join(folder, 'sdn.csv'), '--source', 'ofac', '--format', 'ofac-csv'], env()), /^vouch: ofac-csv reads alt\.csv and add\.csv beside sdn\.csv: .*alt\.csv is missing\n$/);
    expectFailure(await runCli(['lists', 'import', path.join(FIXTURES, 'lists/v1.csv'), '--source', 'ng', '--format', 'pdf'], env()), /^vouch: format must be one of un-xml, .*csv, got "pdf"\n$/);
    expectFailure(await runCli(['lists', 'import', path.join(folder, 'nothing.csv'), '--source', 'ng', '--format', 'csv'], env()), /^vouch: .*nothing\.csv: no such file\n$/);

    const forced = await cliJson(['lists', 'import', path.join(FIXTURES, 'lists/shrunk.csv'), '--source', 'ng', '--format', 'csv', '--force', '--json'], env());
    expect(forced).toEqual({ source: 'ng', version: 3, entities: 2, added: 0, removed: 3, changed: 0 });
  });

  it('adds official and own sources, shows their freshness, syncs, and removes only with --yes', { timeout: SLOW }, async () => {
    const official = await cliJson<{ name: string; format: string; url: string }[]>(['lists', 'sources', '--json'], env());
    expect(official.map((s) => [s.name, s.format])).toEqual([
      ['un', 'un-xml'],
      ['ofac-sdn', 'ofac-xml'],
      ['ofac-sdn-csv', 'ofac-csv'],
      ['uk', 'uk-csv'],
      ['eu', 'eu-xml'],
    ]);
    const added = await cliJson<Status>(['lists', 'add', '--official', 'un', '--every', '6h', '--json'], env());
    expect(added).toMatchObject({ name: 'un', format: 'un-xml', url: 'https://scsanctions.un.org/resources/xml/en/consolidated.xml', version: 0, every: '6h' });
    expectFailure(await runCli(['lists', 'add', 'uk', '--format', 'uk-csv', '--url', 'https://example.org/uk.csv'], env()), /^vouch: a list source named uk exists already/);
    expectFailure(await runCli(['lists', 'add', 'x', '--format', 'csv', '--url', 'https://example.org/x.csv', '--every', '10s'], env()), /^vouch: interval must be at least 1m/);

    // A publisher on this machine: the sync refuses its address unless VOUCH_ALLOW_PRIVATE_URLS.
    const server = http.createServer((_req, res) => res.writeHead(200, { 'content-type': 'text/csv' }).end('id,schema,name,aliases,birthDate,nationality,topics,program,notes\nX-1,Person,Ada Obi,,1990,NG,pep,,\n'));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    try {
      const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/pep.csv`;
      await cliJson(['lists', 'add', 'pep', '--format', 'csv', '--url', url, '--json'], env());
      const refused = await runCli(['lists', 'sync', 'pep', '--json'], env());
      expect(refused.code).toBe(1);
      expect(JSON.parse(refused.stdout)).toEqual([expect.objectContaining({ source: 'pep', outcome: 'failed', version: 0, error: expect.stringMatching(/private network address/) })]);
      const synced = await cliJson<{ outcome: string; version: number }[]>(['lists', 'sync', 'pep', '--json'], { ...env(), VOUCH_ALLOW_PRIVATE_URLS: '1' });
      expect(synced).toEqual([expect.objectContaining({ source: 'pep', outcome: 'updated', version: 1, entities: 1 })]);
    } finally {
      await new Promise((resolve) => server.close(resolve));
    }

    const statuses = await cliJson<Status[]>(['lists', 'list', '--json'], env());
    const pep = statuses.find((s) => s.name === 'pep')!;
    expect(pep).toMatchObject({ version: 1, entities: 1, every: '15m', lastError: expect.stringMatching(/private network address/) });
    expect(Date.parse(pep.lastSuccessAt!)).toBeGreaterThan(Date.parse(pep.lastFailureAt!));
    expect(Date.parse(pep.nextSyncAt!)).toBeGreaterThan(Date.now());
    expect(statuses.find((s) => s.name === 'ng')).toMatchObject({ version: 3, entities: 2, url: null, nextSyncAt: null });
    expect(Date.parse(statuses.find((s) => s.name === 'ng')!.loadedAt!)).toBeGreaterThan(Date.now() - 600_000);

    const set = await cliJson<Status>(['lists', 'set', 'pep', '--every', '1d', '--json'], env());
    expect(set.every).toBe('1d');
    expectFailure(await runCli(['lists', 'remove', 'ng'], env()), /^vouch: removing ng drops its 2 entities and 3 version\(s\), and screenings stop using it: pass --yes\n$/);
    expect(await cliJson(['lists', 'remove', 'ng', '--yes', '--json'], env())).toEqual({ name: 'ng', removed: true, entities: 2 });
    expectFailure(await runCli(['lists', 'remove', 'ng', '--yes'], env()), /^vouch: no list source named ng/);
  });
});
