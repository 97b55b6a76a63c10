import fs from 'node:fs/promises';
import path from 'node:path';
import { Readable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sharedFaceEngine } from '../../src/identities/biometrics/face-engine.js';
import type { DecodedImage } from '../../src/identities/biometrics/image.js';
import { samplePortraitBase64, TEST_IDENTITY_FACES } from '../../src/identities/biometrics/samples.js';
import { EmbeddedRegistry } from '../../src/identities/registry/embedded.js';
import { importRegistry, type ImportProgress } from '../../src/identities/registry/import.js';
import type { FaceFinder } from '../../src/identities/registry/photo-check.js';
import { loadSharp } from '../../src/platform/sharp.js';
import { runCli, throwawayEnv, type ThrowawayEnv } from '../helpers/cli.js';
import { openTestDatabase, type TestDatabase } from '../helpers/database.js';

/**
 * A registry photo in which no face is found, or which is no image, is reported at import by line
 * number (issue 50, part 3), and its record is stored all the same. The faces are the repository's
 * sample faces (biometrics/samples.ts); the faceless photo is a plain-colour JPEG.
 */

const PERSON = { firstname: 'Chiamaka', lastname: 'Nwosu', gender: 'Female', birthdate: '14-03-1991' };
const bvnLine = (bvn: string, photo?: string) => JSON.stringify({ type: 'bvn', record: { ...PERSON, bvn, phone: '08031112222', ...(photo === undefined ? {} : { photo }) } });
const ninLine = (nin: string, photo?: string) => JSON.stringify({ type: 'nin', record: { ...PERSON, nin, ...(photo === undefined ? {} : { photo }) } });
const licenseLine = (licenseNo: string, photo?: string) =>
  JSON.stringify({
    type: 'drivers_license',
    record: { ...PERSON, licenseNo, issuedDate: '01-02-2020', expiryDate: '01-02-2030', stateOfIssue: 'Lagos', ...(photo === undefined ? {} : { photo }) },
  });
const jsonl = (lines: string[]) => Readable.from([`${lines.join('\n')}\n`]);

const UNTIL_FIXED = 'a face match against this record will fail until it is imported again with a photo that shows a face';
const NO_FACE = `no face was found in the photo; ${UNTIL_FIXED}`;
const NOT_AN_IMAGE = `the photo must be a JPEG, PNG or WebP image; ${UNTIL_FIXED}`;
const NOT_DECODED = `the photo could not be decoded as an image; ${UNTIL_FIXED}`;

/** The shared face engine, counting the images it is shown. */
function countingEngine(): FaceFinder & { described: number } {
  const counting = {
    described: 0,
    describe(image: DecodedImage) {
      counting.described += 1;
      return sharedFaceEngine().describe(image);
    },
  };
  return counting;
}

let face: string;
let otherFace: string;
let blank: string;
/** A PDF's first bytes: base64 that decodes, to something that is not an image. */
const pdf = Buffer.from('%PDF-1.4\n1 0 obj << /Type /Catalog >> endobj\n').toString('base64');
/** A JPEG's signature followed by noise: sniffed as a JPEG, not decodable. */
const brokenJpeg = Buffer.concat([Buffer.from([0xff, 0xd8, 0xff, 0xe0]), Buffer.alloc(200, 0x41)]).toString('base64');
const garbage = '@@ this is not base64 at all: ###';

beforeAll(async () => {
  face = await samplePortraitBase64(TEST_IDENTITY_FACES.bvn);
  otherFace = await samplePortraitBase64(TEST_IDENTITY_FACES.nin);
  const sharp = await loadSharp();
  blank = (await sharp({ create: { width: 160, height: 200, channels: 3, background: '#b08a6e' } }).jpeg({ quality: 85 }).toBuffer()).toString('base64');
});

describe('registry import: photo check', () => {
  let database: TestDatabase;
  let registry: EmbeddedRegistry;
  const db = () => database.db;

  beforeAll(async () => {
    database = await openTestDatabase();
    registry = new EmbeddedRegistry(db());
  });
  afterAll(() => database?.cleanup());

  it('reports photos without a face or that are no image by line number, stores every record, and passes faces', { timeout: 60_000 }, async () => {
    const engine = countingEngine();
    const lines = [
      bvnLine('22211100001', face),
      ninLine('12111100002', blank),
      licenseLine('LAG11100003', garbage),
      '{"type": "bvn", "record": ',
      ninLine('12111100005', pdf),
      bvnLine('22211100006', brokenJpeg),
      // The same bytes as line 1, as a data URL: the matcher strips the prefix, so does the check.
      ninLine('12111100007', `data:image/jpeg;base64,${face}`),
      licenseLine('LAG11100008', otherFace),
      // The same blank photo again: reported again, described once.
      bvnLine('22211100009', blank),
      // A vNIN's photo is a URL, not fetched; a record without a photo has nothing to check.
      JSON.stringify({ type: 'vnin', record: { ...PERSON, vNin: 'AB12CD34EF56GH10', photo: 'https://example.com/photo.jpg' } }),
      bvnLine('22211100011'),
    ];
    const result = await importRegistry(db(), jsonl(lines), { checkPhotos: { engine } });

    expect(result).toMatchObject({ imported: 10, rejected: 1, new: 10 });
    expect(result.errors.map((error) => error.line)).toEqual([4]);
    expect(result.photos).toEqual({
      checked: 8,
      noFace: 2,
      unreadable: 3,
      unchecked: 0,
      problems: [
        { line: 2, problem: 'no_face', message: NO_FACE },
        { line: 3, problem: 'unreadable', message: NOT_AN_IMAGE },
        { line: 5, problem: 'unreadable', message: NOT_AN_IMAGE },
        { line: 6, problem: 'unreadable', message: NOT_DECODED },
        { line: 9, problem: 'no_face', message: NO_FACE },
      ],
    });
    // Three distinct photos decode: two faces and the blank. Each is shown to the engine once.
    expect(engine.described).toBe(3);

    // Reported records are stored as they came; the match answers for them as it does today.
    expect((await registry.find('nin', '12111100002'))?.photo).toBe(blank);
    expect((await registry.find('drivers_license', 'LAG11100003'))?.photo).toBe(garbage);
    expect((await registry.find('nin', '12111100005'))?.photo).toBe(pdf);
    expect((await registry.find('bvn', '22211100006'))?.photo).toBe(brokenJpeg);
    expect((await registry.find('bvn', '22211100009'))?.photo).toBe(blank);
    expect((await registry.find('bvn', '22211100001'))?.photo).toBe(face);

    const reported = JSON.stringify(result.photos);
    for (const value of ['2221110', '1211110', 'LAG111', PERSON.firstname, PERSON.lastname, face.slice(0, 20), blank.slice(0, 20)]) {
      expect(reported).not.toContain(value);
    }
  });

  it('checks nothing without the option: photos are stored and counted as not checked', async () => {
    const lines = [bvnLine('22211100021', blank), ninLine('12111100022', garbage), bvnLine('22211100023')];
    const progress: ImportProgress[] = [];
    const result = await importRegistry(db(), jsonl(lines), { onProgress: (p) => progress.push(p) });
    expect(result).toMatchObject({ imported: 3, rejected: 0 });
    expect(result.photos).toEqual({ checked: 0, noFace: 0, unreadable: 0, unchecked: 2, problems: [] });
    expect(progress.at(-1)?.photos).toBeUndefined();
    expect((await registry.find('nin', '12111100022'))?.photo).toBe(garbage);
  });

  it('never shows the engine an image when no line has a photo, so the model is not loaded', async () => {
    const engine = { describe: () => Promise.reject(new Error('the engine was asked')) } satisfies FaceFinder;
    const lines = [bvnLine('22211100031'), ninLine('12111100032'), licenseLine('LAG11100033'), bvnLine('22211100034', '')];
    const result = await importRegistry(db(), jsonl(lines), { checkPhotos: { engine } });
    expect(result).toMatchObject({ imported: 4, rejected: 0 });
    expect(result.photos).toEqual({ checked: 0, noFace: 0, unreadable: 0, unchecked: 0, problems: [] });
  });

  it('keeps the first 100 reported lines by line number and counts them all', async () => {
    const engine = { describe: () => Promise.reject(new Error('unreadable photos never reach the engine')) } satisfies FaceFinder;
    const lines = Array.from({ length: 150 }, (_, i) => ninLine(String(12111101000 + i), i % 2 === 0 ? garbage : pdf));
    const result = await importRegistry(db(), jsonl(lines), { checkPhotos: { engine } });
    expect(result.photos).toMatchObject({ checked: 150, unreadable: 150, noFace: 0 });
    expect(result.photos.problems.map((problem) => problem.line)).toEqual(Array.from({ length: 100 }, (_, i) => i + 1));
  });

  it('reads no further ahead than its queue while the checks are behind, then finishes every check', { timeout: 60_000 }, async () => {
    let open: () => void = () => {};
    const gate = new Promise<void>((resolve) => (open = resolve));
    let described = 0;
    const engine = {
      async describe() {
        described += 1;
        await gate;
        return undefined;
      },
    } satisfies FaceFinder;
    let yielded = 0;
    const total = 6_000;
    async function* lines() {
      for (let i = 0; i < total; i++) {
        yielded += 1;
        yield `${bvnLine(String(22211200000 + i), blank)}\n`;
      }
    }
    const progress: ImportProgress[] = [];
    const imported = importRegistry(db(), Readable.from(lines()), {
      checkPhotos: { engine, concurrency: 2, queueSize: 8 },
      onProgress: (p) => progress.push(p),
      progressEveryMs: 10,
    });
    await new Promise((resolve) => setTimeout(resolve, 500));
    // readline buffers up to about a thousand lines of its own; the checks hold the rest back.
    expect(yielded).toBeLessThan(2_000);
    expect(progress.at(-1)?.photos).toMatchObject({ checked: 0, waiting: expect.any(Number) });
    expect(progress.every((p) => p.photos!.waiting <= 10)).toBe(true);
    open();
    const result = await imported;
    expect(yielded).toBe(total);
    expect(result.photos).toMatchObject({ checked: total, noFace: total, unreadable: 0 });
    expect(result.photos.problems).toHaveLength(100);
    expect(described).toBe(1);
    expect(progress.at(-1)?.photos).toMatchObject({ checked: total, noFace: total, waiting: 0 });
  });

  it('stops with a clear error when the face engine fails, keeping the batches stored before it', async () => {
    const engine = { describe: () => Promise.reject(new Error('face model missing')) } satisfies FaceFinder;
    await expect(importRegistry(db(), jsonl([bvnLine('22211100041', blank)]), { checkPhotos: { engine } })).rejects.toThrow(
      /^the photo check failed \(face model missing\); .*--no-check-photos$/,
    );
  });
});

// Spawns `vouch` as built for the run (test/global-setup.ts); the first photo loads the model.
const SLOW = 120_000;

describe('vouch registry import: photo check', () => {
  let throwaway: ThrowawayEnv;
  let file: string;
  const numbers = ['22211100051', '12111100052', 'LAG11100053', '22211100054'];

  beforeAll(async () => {
    throwaway = await throwawayEnv();
    file = path.join(String(throwaway.env.VOUCH_DATA_DIR), 'photos.jsonl');
    const lines = [bvnLine(numbers[0]!, face), ninLine(numbers[1]!, blank), licenseLine(numbers[2]!, garbage), bvnLine(numbers[3]!)];
    await fs.writeFile(file, `${lines.join('\n')}\n`);
  });
  afterAll(() => throwaway?.cleanup());

  const expectNothingPersonal = (output: string) => {
    for (const value of [...numbers, '08031112222', PERSON.firstname, PERSON.lastname, face.slice(0, 20), blank.slice(0, 20)]) {
      expect(output).not.toContain(value);
    }
  };

  it('prints the reported lines on stderr, the counts in --json and progress, and nothing personal', { timeout: SLOW }, async () => {
    const result = await runCli(['registry', 'import', file, '--json', '--progress'], throwaway.env);
    expect(result.code, result.stderr).toBe(0);
    expect(JSON.parse(result.stdout)).toEqual({
      imported: 4, rejected: 0, new: 4, updated: 0, unchanged: 0,
      photos: { checked: 3, noFace: 1, unreadable: 1, unchecked: 0 },
    });
    const stderr = result.stderr.trimEnd().split('\n');
    const progress = stderr.filter((text) => text.startsWith('registry import: '));
    expect(progress.at(-1)).toMatch(/^registry import: 4 read, 4 imported, 0 rejected, \d+ records\/s; photos: 3 checked \(1 without a face, 1 unreadable\), 0 waiting$/);
    expect(stderr.filter((text) => !text.startsWith('registry import: '))).toEqual([`line 2: ${NO_FACE}`, `line 3: ${NOT_AN_IMAGE}`]);
    expectNothingPersonal(result.stdout + result.stderr);

    const human = await runCli(['registry', 'import', file], throwaway.env);
    expect(human.code, human.stderr).toBe(0);
    expect(human.stdout).toBe('imported 4 (0 new, 0 updated, 4 unchanged), rejected 0; photos: 3 checked, 1 without a face, 1 unreadable\n');
    expect(human.stderr).toBe(`line 2: ${NO_FACE}\nline 3: ${NOT_AN_IMAGE}\n`);
    expectNothingPersonal(human.stdout + human.stderr);
  });

  it('--no-check-photos checks nothing and says how many photos went unchecked', { timeout: SLOW }, async () => {
    const json = await runCli(['registry', 'import', file, '--json', '--no-check-photos'], throwaway.env);
    expect(json.code, json.stderr).toBe(0);
    expect(JSON.parse(json.stdout)).toMatchObject({ imported: 4, photos: { checked: 0, noFace: 0, unreadable: 0, unchecked: 3 } });
    expect(json.stderr).toBe('');
    const human = await runCli(['registry', 'import', file, '--no-check-photos'], throwaway.env);
    expect(human.stdout).toBe('imported 4 (0 new, 0 updated, 4 unchanged), rejected 0; photos: 3 not checked\n');
  });
});
