import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs/promises';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import sharp from 'sharp';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { reencodePhoto } from '../../src/files/photos.js';
import { cliJson, expectFailure, killServers, onPostgres, runCli, startServer, throwawayEnv, type CliEnv, type RunningServer, type ThrowawayEnv } from '../helpers/cli.js';

/**
 * The backup drill of docs/backup.md, through the front door on the database the suite runs on:
 * real `vouch serve` processes and CLI commands make an organization, a live registry record with
 * a photo, lookups and an address verification with two photos; the data is backed up (embedded:
 * `vouch backup`; PostgreSQL: pg_dump and a copy of the photo folder), destroyed, restored, and
 * everything reads back, decrypted with the same key. With another key, or none, nothing does.
 */

const run = promisify(execFile);
const SLOW = 240_000;
// A NIN and a name that appear nowhere else, to look for in the backup's bytes.
const NIN = '31415926535';
const RECORD = { nin: NIN, firstname: 'Oluwadunsin', lastname: 'Backupdrill', gender: 'Female', phone: '08039991234', birthdate: '12-12-1991' };
// The account's risk level (LOW, which address verification needs) asks lookups for the applicant's names.
const APPLICANT = { firstname: 'Oluwadunsin', lastname: 'Backupdrill', dob: '12-12-1991' };
const ADDRESS = {
  street: '3 Restore Close',
  lga: 'Eti-Osa',
  state: 'Lagos',
  applicant: { firstname: 'Oluwadunsin', lastname: 'Backupdrill', idType: 'NIN', idNumber: NIN },
};

async function freePort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as net.AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

/** Every file's bytes under `dir`, for looking for plaintext in a backup. */
async function allBytes(dir: string): Promise<Buffer> {
  const parts: Buffer[] = [];
  for (const entry of await fs.readdir(dir, { recursive: true, withFileTypes: true })) {
    if (entry.isFile()) parts.push(await fs.readFile(path.join(entry.parentPath, entry.name)));
  }
  return Buffer.concat(parts);
}

describe(`backup drill on ${onPostgres ? 'PostgreSQL' : 'the embedded database'}`, () => {
  const key = randomBytes(32).toString('base64');
  let throwaway: ThrowawayEnv;
  let env: CliEnv;
  let work: string;
  let server: RunningServer | undefined;
  let base = '';
  let org: { id: string; liveSecret: string; testSecret: string };
  let addressId: number;
  let photos: Buffer[];
  let photoPaths: string[];
  let photoOnRecord: string;

  const call = async (method: string, url: string, secret: string, body?: object | FormData) => {
    const headers: Record<string, string> = { authorization: `Bearer ${secret}` };
    let payload: string | FormData | undefined;
    if (body instanceof FormData) payload = body;
    else if (body) {
      headers['content-type'] = 'application/json';
      payload = JSON.stringify(body);
    }
    const res = await fetch(`${base}${url}`, { method, headers, body: payload });
    return { status: res.status, json: (await res.json()) as Record<string, any> };
  };

  const start = async (serverEnv: CliEnv = env) => {
    const port = await freePort();
    base = `http://127.0.0.1:${port}`;
    server = await startServer({ ...serverEnv, PORT: String(port), PUBLIC_URL: base });
  };
  const stop = async () => {
    await server?.stop();
    server = undefined;
  };

  /** The organization, through the CLI (on the embedded database, while no server holds it). */
  const expectOrganization = async () => {
    const shown = await cliJson<{ id: string; name: string; balance: number }>(['org', 'show', org.id, '--json'], env);
    expect(shown).toMatchObject({ id: org.id, name: 'Backup Drill Ltd' });
    expect(shown.balance).toBeLessThan(10_000_000);
  };

  /** What the drill reads back over HTTP: the registry record and its photo, the address and its photos. */
  const expectEverythingReadable = async () => {
    const lookup = await call('POST', `/v1/verifications/identities/nin/${NIN}`, org.liveSecret, APPLICANT);
    expect(lookup.status).toBe(201);
    expect(lookup.json.data).toMatchObject({ firstname: 'Oluwadunsin', lastname: 'Backupdrill', phone: '08039991234', photo: photoOnRecord });
    const sandbox = await call('POST', '/v1/verifications/identities/nin/70412358961', org.testSecret, { firstname: 'Babatunde', lastname: 'Adeyemi', dob: '02-11-1985' });
    expect(sandbox.json.data).toMatchObject({ firstname: 'Babatunde' });
    const address = await call('GET', `/v1/verifications/addresses/${addressId}`, org.liveSecret);
    expect(address.json.data).toMatchObject({ street: '3 Restore Close', applicant: { firstname: 'Oluwadunsin', lastname: 'Backupdrill' }, neighbor: { name: 'Mama Ijeoma' } });
    const urls = address.json.data.photos as string[];
    expect(urls.map((url) => new URL(url).pathname)).toEqual(photoPaths);
    for (const [i, url] of urls.entries()) {
      const parsed = new URL(url);
      const download = await fetch(`${base}${parsed.pathname}${parsed.search}`);
      expect(download.status).toBe(200);
      expect(Buffer.from(await download.arrayBuffer()).equals(photos[i]!)).toBe(true);
    }
  };

  beforeAll(async () => {
    throwaway = await throwawayEnv();
    work = await fs.mkdtemp(path.join(os.tmpdir(), 'vouch-backup-'));
    env = { ...throwaway.env, VOUCH_ENCRYPTION_KEY: key };
    const created = await cliJson<{ id: string; liveSecret: string; testSecret: string }>(
      ['org', 'create', '--name', 'Backup Drill Ltd', '--enable', '--risk-level', 'LOW', '--payload-type', 'FULL', '--fund', '10000000', '--json'],
      env,
    );
    org = created;
    const agent = await cliJson<{ credential: string }>(['agent', 'create', '--name', 'Drill Agent', '--email', 'drill@agents.example', '--phone', '08031239876', '--states', 'Lagos', '--json'], env);
    const identities = await cliJson<{ nin: { photo: string } }>(['test-identities', '--json'], env);
    photoOnRecord = identities.nin.photo.replace(/^data:image\/\w+;base64,/, '');
    const jsonl = path.join(work, 'registry.jsonl');
    await fs.writeFile(jsonl, `${JSON.stringify({ type: 'nin', record: { ...RECORD, photo: identities.nin.photo } })}\n`);
    expect(await cliJson(['registry', 'import', jsonl, '--json'], env)).toMatchObject({ imported: 1, rejected: 0 });

    await start();
    const first = await call('POST', `/v1/verifications/identities/nin/${NIN}`, org.liveSecret, APPLICANT);
    expect(first.status, first.json.message).toBe(201);
    const created2 = await call('POST', '/v1/verifications/addresses', org.liveSecret, { ...ADDRESS, reference: 'backup-drill' });
    expect(created2.status, created2.json.message).toBe(201);
    addressId = created2.json.data.id as number;
    const uploads = await Promise.all(['#246', '#642'].map((background) => sharp({ create: { width: 40, height: 30, channels: 3, background } }).jpeg().toBuffer()));
    // Stored re-encoded (docs/field-agents.md): those are the bytes to read back and to look for.
    photos = await Promise.all(uploads.map(async (upload) => (await reencodePhoto(upload)).bytes));
    const form = new FormData();
    form.set('outcome', 'verified');
    form.set('latitude', '6.4474');
    form.set('longitude', '3.4723');
    form.set('neighborName', 'Mama Ijeoma');
    for (const [i, photo] of uploads.entries()) form.append('photos', new Blob([new Uint8Array(photo)], { type: 'image/jpeg' }), `photo-${i}.jpg`);
    const filed = await call('POST', `/v1/agent/tasks/address/${addressId}/report`, agent.credential, form);
    expect(filed.status, JSON.stringify(filed.json)).toBe(200);
    photoPaths = ((await call('GET', `/v1/verifications/addresses/${addressId}`, org.liveSecret)).json.data.photos as string[]).map((url) => new URL(url).pathname);
    expect(photoPaths).toHaveLength(2);
    await expectEverythingReadable();
  }, SLOW);

  afterAll(async () => {
    killServers();
    await throwaway?.cleanup();
    await fs.rm(work, { recursive: true, force: true });
  });

  if (!onPostgres) {
    it('vouch backup refuses while the server holds the data folder, and backs up once it is stopped', async () => {
      const running = await runCli(['backup', path.join(work, 'while-running'), '--json'], env);
      expectFailure(running, /^vouch: the embedded database in .* is in use by process \d+/);
      await stop();
      const backup = path.join(work, 'backup');
      const manifest = await cliJson<{ format: string; migrations: string[]; kekIds: string[]; files: number }>(['backup', backup, '--json'], env);
      expect(manifest).toMatchObject({ format: 'vouch-embedded-backup/1', files: 2 });
      expect(manifest.kekIds).toHaveLength(1);
      expect(manifest.migrations.length).toBeGreaterThan(20);
      // The key stays out of the backup, and nothing personal is readable in it.
      const entries = await fs.readdir(backup);
      expect(entries.sort()).toEqual(['files', 'manifest.json', 'pglite']);
      const bytes = await allBytes(backup);
      for (const plain of [NIN, 'Backupdrill', '08039991234', '3 Restore Close']) expect(bytes.includes(plain), plain).toBe(false);
      for (const photo of photos) expect(bytes.includes(photo)).toBe(false);
      expectFailure(await runCli(['backup', backup], env), /is not empty: back up into a new folder/);
    }, SLOW);

    it('destroyed, then restored: with another key or none nothing is restored; with the key everything reads back', async () => {
      const dataDir = env.VOUCH_DATA_DIR!;
      await fs.rm(dataDir, { recursive: true, force: true });
      const backup = path.join(work, 'backup');
      const noKey = { ...env, VOUCH_ENCRYPTION_KEY: '' };
      expectFailure(await runCli(['restore', backup], noKey), /^vouch: the backup is encrypted under the key [0-9a-f]{16}: set VOUCH_ENCRYPTION_KEY to it/);
      const otherKey = { ...env, VOUCH_ENCRYPTION_KEY: randomBytes(32).toString('base64') };
      expectFailure(await runCli(['restore', backup], otherKey), /^vouch: the backup is encrypted under the key [0-9a-f]{16}, and the key given is [0-9a-f]{16}/);
      expect(await fs.readdir(dataDir).catch(() => [])).not.toContain('pglite');

      const restored = await cliJson<{ files: number; kekId: string }>(['restore', backup, '--json'], env);
      expect(restored).toMatchObject({ files: 2 });
      expectFailure(await runCli(['restore', backup], env), /already holds a database/);
      // Restored data under another key: the server refuses to start, saying which key it needs.
      const refused = await runCli(['serve'], { ...otherKey, PORT: '0' });
      expect(refused.code).not.toBe(0);
      expect(refused.stderr).toMatch(/wrapped by the key-encryption key [0-9a-f]{16}, which is neither VOUCH_ENCRYPTION_KEY/);
      await expectOrganization();
      await start();
      await expectEverythingReadable();
      await stop();
    }, SLOW);
  } else {
    it('pg_dump, database dropped, pg_restore and the photo folder copied back: readable with the key only', async () => {
      await stop();
      const url = env.DATABASE_URL!;
      const dump = path.join(work, 'vouch.dump');
      await run('pg_dump', ['--format=custom', '--no-owner', `--file=${dump}`, url]);
      const files = path.join(work, 'files');
      await fs.cp(path.join(env.VOUCH_DATA_DIR!, 'files'), files, { recursive: true });
      // Nothing personal in the dump (plain SQL of it) or the photo copy.
      const { stdout: sqlText } = await run('pg_restore', ['--file=-', dump], { maxBuffer: 256 * 1024 * 1024 });
      const bytes = Buffer.concat([Buffer.from(sqlText), await allBytes(files)]);
      for (const plain of [NIN, 'Backupdrill', '08039991234', '3 Restore Close']) expect(bytes.includes(plain), plain).toBe(false);
      for (const photo of photos) expect(bytes.includes(photo)).toBe(false);

      // Destroyed: the database and the photo folder.
      const name = new URL(url).pathname.slice(1);
      const admin = new URL(url);
      admin.pathname = '/postgres';
      await run('psql', [admin.toString(), '-qc', `drop database ${name} with (force)`]);
      await fs.rm(path.join(env.VOUCH_DATA_DIR!, 'files'), { recursive: true, force: true });

      await run('psql', [admin.toString(), '-qc', `create database ${name}`]);
      await run('pg_restore', ['--no-owner', '--exit-on-error', `--dbname=${url}`, dump]);
      await fs.cp(files, path.join(env.VOUCH_DATA_DIR!, 'files'), { recursive: true });

      const otherKey = { ...env, VOUCH_ENCRYPTION_KEY: randomBytes(32).toString('base64') };
      const refused = await runCli(['serve'], { ...otherKey, PORT: '0' });
      expect(refused.code).not.toBe(0);
      expect(refused.stderr).toMatch(/wrapped by the key-encryption key [0-9a-f]{16}, which is neither VOUCH_ENCRYPTION_KEY/);
      const noKey = await runCli(['serve'], { ...env, VOUCH_ENCRYPTION_KEY: '', PORT: '0' });
      expect(noKey.code).not.toBe(0);
      expect(noKey.stderr).toMatch(/VOUCH_ENCRYPTION_KEY is not set/);
      expectFailure(await runCli(['backup', path.join(work, 'nope')], env), /on PostgreSQL use pg_dump/);

      await expectOrganization();
      await start();
      await expectEverythingReadable();
      await stop();
    }, SLOW);
  }
});
