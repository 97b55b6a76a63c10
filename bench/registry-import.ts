/**
 * Registry import throughput on PostgreSQL: `npx tsx bench/registry-import.ts`.
 * Loads 200,000 synthetic records into a throwaway database (on the server of DATABASE_URL), then
 * imports the same lines again as a resumed run would, and prints {"records", "seconds",
 * "recordsPerSecond", "rerunSeconds", "rerunRecordsPerSecond"}. Half the dates are ISO and half
 * the vNINs come without an id, so both are normalised on the way. The target is at least 50,000
 * records/s for the first load.
 */
import { randomBytes } from 'node:crypto';
import { Readable } from 'node:stream';
import pg from 'pg';
import { importRegistry } from '../src/identities/registry/import.js';
import { loadConfig } from '../src/config.js';
import { openKeyring } from '../src/platform/crypto/open.js';
import { openDatabase } from '../src/platform/db/database.js';
import { migrate } from '../src/platform/db/migrate.js';

const RECORDS = 200_000;
const LINES_PER_CHUNK = 200;
const serverUrl = process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';

const FIRST = ['Adaeze', 'Babatunde', 'Chinedu', 'Fatima', 'Ibrahim', 'Ngozi', 'Oluwaseun', 'Zainab'];
const LAST = ['Okonkwo', 'Adeyemi', 'Bello', 'Eze', 'Musa', 'Okafor', 'Ogunleye', 'Yusuf'];
const MOBILE_PREFIXES = ['0803', '0805', '0806', '0807', '0810', '0813', '0816', '0903'];

function synthetic(i: number): string {
  const firstname = FIRST[i % FIRST.length]!;
  const lastname = LAST[(i >> 3) % LAST.length]!;
  const gender = i % 2 === 0 ? 'Female' : 'Male';
  const [day, month, year] = [String((i % 28) + 1).padStart(2, '0'), String((i % 12) + 1).padStart(2, '0'), 1950 + (i % 55)];
  const birthdate = i % 2 === 0 ? `${day}-${month}-${year}` : `${year}-${month}-${day}`;
  const phone = `${MOBILE_PREFIXES[i % MOBILE_PREFIXES.length]}${String(i).padStart(7, '0')}`;
  const number = String(10_000_000_000 + i);
  const slot = i % 20;
  if (slot < 9) {
    const record = {
      bvn: number, firstname, lastname, middlename: 'Chioma', gender, phone, birthdate,
      email: `person${i}@example.com`, nationality: 'Nigerian', residentialAddress: `${i % 200} Allen Avenue, Ikeja, Lagos`,
      stateOfOrigin: 'Anambra', enrollmentBank: 'Guaranty Trust Bank',
    };
    return JSON.stringify({ type: 'bvn', record });
  }
  if (slot < 17) {
    const record = { nin: number, firstname, lastname, middlename: 'Oluwaseun', phone, gender, birthdate, nationality: 'Nigerian' };
    return JSON.stringify({ type: 'nin', record });
  }
  if (slot === 17) {
    const record = { vNin: `VN${number}XYZ`, ...(i % 40 === 17 ? { id: i + 1 } : {}), firstname, lastname, birthdate, gender, phone };
    return JSON.stringify({ type: 'vnin', record });
  }
  if (slot === 18) {
    const record = { type: 'limited_company', rcNumber: `RC ${i}`, companyName: `${lastname} Holdings ${i} Limited`, status: 'ACTIVE' };
    return JSON.stringify({ type: 'cac', record });
  }
  return JSON.stringify({ type: 'tin', record: { tin: `${String(i).padStart(8, '0')}-0001`, taxpayerName: `${lastname} Ventures ${i}` } });
}

function* chunks(lines: string[]): Generator<string> {
  for (let i = 0; i < lines.length; i += LINES_PER_CHUNK) yield `${lines.slice(i, i + LINES_PER_CHUNK).join('\n')}\n`;
}

async function withServer(run: (client: pg.Client) => Promise<void>): Promise<void> {
  const client = new pg.Client({ connectionString: serverUrl });
  await client.connect();
  try {
    await run(client);
  } finally {
    await client.end();
  }
}

const name = `vouch_bench_${randomBytes(6).toString('hex')}`;
await withServer((client) => client.query(`create database ${name}`).then(() => undefined));
try {
  const url = new URL(serverUrl);
  url.pathname = `/${name}`;
  const database = await openDatabase({ url: url.toString() });
  try {
    await migrate(database.db);
    // Records are stored encrypted under a throwaway key (the bench database is dropped after).
    await openKeyring(database, { ...loadConfig(), encryptionKey: loadConfig().encryptionKey ?? Buffer.alloc(32, 0x3c) });
    const lines = Array.from({ length: RECORDS }, (_, i) => synthetic(i));
    const timed = async () => {
      const started = performance.now();
      const result = await importRegistry(database.db, Readable.from(chunks(lines)));
      return { result, seconds: (performance.now() - started) / 1000 };
    };
    const first = await timed();
    if (first.result.rejected > 0) throw new Error(`synthetic lines rejected: ${JSON.stringify(first.result.errors.slice(0, 3))}`);
    if (first.result.new !== RECORDS) throw new Error(`first load: ${first.result.new} new of ${RECORDS}`);
    const rerun = await timed();
    if (rerun.result.unchanged !== RECORDS) throw new Error(`re-run: ${rerun.result.unchanged} unchanged of ${RECORDS}`);
    const round = (value: number) => Number(value.toFixed(3));
    console.log(
      JSON.stringify({
        records: first.result.imported,
        seconds: round(first.seconds),
        recordsPerSecond: Math.round(RECORDS / first.seconds),
        rerunSeconds: round(rerun.seconds),
        rerunRecordsPerSecond: Math.round(RECORDS / rerun.seconds),
      }),
    );
  } finally {
    await database.close();
  }
} finally {
  await withServer((client) => client.query(`drop database if exists ${name} with (force)`).then(() => undefined));
}
