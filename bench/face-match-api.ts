/**
 * `npx tsx bench/face-match-api.ts [--faces DIR] [--impostors N] [--json]`: the face match's error
 * rates per group through the public API, as a customer meets them (issue 50, "What it must show").
 *
 * A real server (dist/, built if stale) on an embedded database of its own, in a temporary folder.
 * Each person of labels/eval_set.json is a live NIN record whose photo is that person's first photo
 * (one photo each, as a registry holds); each of their other photos is sent to
 * POST /v1/verifications/identities/biometrics against their own NIN (a genuine trial) and against
 * N other people's NINs of the same group, drawn with a fixed seed (impostor trials; default 8 for
 * Black people, 1 for the others), and N/2 of the other group (cross). Reported per group, with
 * the trial counts: genuine trials rejected (no match, or no face found in the photo sent), false
 * matches, and the server's CPU per request; each answer's score is also tallied at the default
 * threshold's neighbours (one point either side). The photos are read from DIR (default
 * ../shared/faces) at run time and sent over loopback only; without the folder the script says so
 * and exits 0.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { distanceToScore, MATCH_THRESHOLD } from '../src/identities/biometrics/score.js';
import { ensureBuilt } from './lib/build.js';
import { deferCleanup } from './lib/cleanup.js';
import { cpuSeconds } from './lib/cpu.js';
import { BenchError } from './lib/errors.js';
import { labelledSet, REPO_ROOT } from './lib/face-set.js';
import { lastJsonLine, NO_RATE_LIMITS, runCommand, startServer, type Env } from './lib/processes.js';

interface Person {
  id: string;
  group: string;
  nin: string;
  photos: string[];
}

/** The answer's score (a match at the default when it is at least the default threshold), or no face in the photo sent. */
type Outcome = number | 'no_face';

interface Tally {
  genuineTrials: number;
  genuineRejected: number;
  genuineNoFace: number;
  impostorTrials: number;
  falseMatches: number;
  impostorNoFace: number;
}

const CONCURRENCY = 2;
/** The service's default threshold (a score) and its neighbours: each trial's score is tallied at each. */
const THRESHOLDS = [distanceToScore(MATCH_THRESHOLD) - 1, distanceToScore(MATCH_THRESHOLD), distanceToScore(MATCH_THRESHOLD) + 1];

/** A small seeded generator (mulberry32): the same impostor draws on every run. */
function seeded(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

function draw<T>(pool: readonly T[], count: number, random: () => number): T[] {
  const copy = [...pool];
  const picked: T[] = [];
  while (picked.length < count && copy.length > 0) picked.push(copy.splice(Math.floor(random() * copy.length), 1)[0]!);
  return picked;
}

const emptyTally = (): Tally => ({ genuineTrials: 0, genuineRejected: 0, genuineNoFace: 0, impostorTrials: 0, falseMatches: 0, impostorNoFace: 0 });

async function main(): Promise<void> {
  const { values } = parseArgs({ options: { faces: { type: 'string' }, impostors: { type: 'string' }, json: { type: 'boolean' } } });
  const set = await labelledSet('face-match-api', values.faces);
  if (!set) return;
  const impostorsOption = values.impostors === undefined ? undefined : Number(values.impostors);
  if (impostorsOption !== undefined && !(Number.isInteger(impostorsOption) && impostorsOption >= 0)) throw new BenchError('--impostors takes a whole number');
  const impostorsFor = (group: string) => impostorsOption ?? (group === 'black' ? 8 : 1);
  const log = (line: string) => {
    if (!values.json) process.stdout.write(`${line}\n`);
  };

  const people = new Map<string, Person>();
  for (const entry of set.entries) {
    const person = people.get(entry.id) ?? { id: entry.id, group: entry.group, nin: `7${String(people.size + 1).padStart(10, '0')}`, photos: [] };
    person.photos.push(entry.path);
    people.set(entry.id, person);
  }
  const photoBase64 = async (file: string) => (await set.read(file)).toString('base64');

  const main = ensureBuilt(REPO_ROOT);
  const dataDir = mkdtempSync(path.join(os.tmpdir(), 'vouch-face-api-'));
  const removeDir = deferCleanup(async () => rmSync(dataDir, { recursive: true, force: true }));
  const env: Env = { VOUCH_DATA_DIR: dataDir, VOUCH_DEMO: 'off', LOG_LEVEL: 'warn' };
  delete process.env.DATABASE_URL;
  const vouch = (...args: string[]) => runCommand(process.execPath, [main, ...args], { cwd: REPO_ROOT, env });
  try {
    await vouch('migrate', '--json');
    const org = lastJsonLine<{ liveSecret: string }>(await vouch('org', 'create', '--name', 'Face bench', '--enable', '--fund', '100000000000', '--json'));
    // The registry: each person's first photo, under a NIN of their own (no name of theirs is stored).
    const lines: string[] = [];
    for (const person of people.values()) {
      const record = { nin: person.nin, firstname: 'Test', lastname: `Person${person.nin.slice(-4)}`, gender: 'Male', birthdate: '01-01-1970', photo: await photoBase64(person.photos[0]!) };
      lines.push(JSON.stringify({ type: 'nin', record }));
    }
    const registryFile = path.join(dataDir, 'registry.jsonl');
    writeFileSync(registryFile, `${lines.join('\n')}\n`);
    await vouch('registry', 'import', registryFile, '--json');
    rmSync(registryFile);

    // The trials: every photo but the enrolled one, against its own NIN and drawn others.
    const random = seeded(50);
    const all = [...people.values()];
    const trials: { photo: string; nin: string; group: string; genuine: boolean }[] = [];
    for (const person of all) {
      const sameGroup = all.filter((other) => other !== person && other.group === person.group);
      const otherGroup = all.filter((other) => other.group !== person.group);
      for (const photo of person.photos.slice(1)) {
        trials.push({ photo, nin: person.nin, group: `${person.group}–${person.group}`, genuine: true });
        for (const other of draw(sameGroup, impostorsFor(person.group), random)) trials.push({ photo, nin: other.nin, group: `${person.group}–${person.group}`, genuine: false });
        for (const other of draw(otherGroup, Math.floor(impostorsFor(person.group) / 2), random)) trials.push({ photo, nin: other.nin, group: 'cross', genuine: false });
      }
    }

    const server = await startServer({ name: 'vouch', command: process.execPath, args: [main, 'serve'], cwd: REPO_ROOT, env: { ...env, ...NO_RATE_LIMITS }, readyTimeoutMs: 60_000 });
    const tallies = new Map<string, Tally>();
    let cpuSecondsUsed = 0;
    try {
      const send = async (photo: string, nin: string): Promise<Outcome> => {
        const response = await fetch(`${server.url}/v1/verifications/identities/biometrics`, {
          method: 'POST',
          headers: { authorization: `Bearer ${org.liveSecret}`, 'content-type': 'application/json' },
          body: JSON.stringify({ idType: 'nin', idNumber: nin, photo: await photoBase64(photo) }),
        });
        const text = await response.text();
        if (response.status === 400 && /No face was found in the supplied photo/.test(text)) return 'no_face';
        if (response.status !== 200) throw new BenchError(`biometrics answered ${response.status}: ${text.slice(0, 300)}`);
        const { photoMatching } = (JSON.parse(text) as { data: { photoMatching: { match: boolean; matchScore: number; matchingThreshold: number } } }).data;
        if (photoMatching.match !== photoMatching.matchScore >= photoMatching.matchingThreshold) throw new BenchError(`match disagrees with its score: ${JSON.stringify(photoMatching)}`);
        return photoMatching.matchScore;
      };
      // The registry photos are described once each (the server caches them), before the clock starts.
      for (const person of all) await send(person.photos[0]!, person.nin);
      const cpuBefore = cpuSeconds(server.pid) ?? 0;
      let next = 0;
      let done = 0;
      await Promise.all(
        Array.from({ length: CONCURRENCY }, async () => {
          while (next < trials.length) {
            const trial = trials[next++]!;
            const outcome = await send(trial.photo, trial.nin);
            for (const threshold of THRESHOLDS) {
              const key = `${trial.group}@${threshold}`;
              const tally = tallies.get(key) ?? emptyTally();
              const match = outcome !== 'no_face' && outcome >= threshold;
              if (trial.genuine) {
                tally.genuineTrials++;
                if (!match) tally.genuineRejected++;
                if (outcome === 'no_face') tally.genuineNoFace++;
              } else {
                tally.impostorTrials++;
                if (match) tally.falseMatches++;
                if (outcome === 'no_face') tally.impostorNoFace++;
              }
              tallies.set(key, tally);
            }
            if (++done % 500 === 0) process.stderr.write(`face-match-api: ${done} of ${trials.length} requests\n`);
          }
        }),
      );
      cpuSecondsUsed = (cpuSeconds(server.pid) ?? 0) - cpuBefore;
    } finally {
      await server.stop();
    }

    const pct = (count: number, of: number, places: number) => (of > 0 ? `${((count / of) * 100).toFixed(places)} %` : '–');
    const result = {
      faces: set.dir,
      people: people.size,
      requests: trials.length,
      serverCpuMsPerRequest: (cpuSecondsUsed * 1000) / trials.length,
      machine: { cpus: os.availableParallelism(), cpu: os.cpus()[0]?.model, node: process.version },
      defaultThreshold: distanceToScore(MATCH_THRESHOLD),
      /** Keyed `group@score`: the trials decided at that threshold (the service answered at the default). */
      groups: Object.fromEntries([...tallies].sort(([a], [b]) => a.localeCompare(b))),
    };
    if (values.json) {
      process.stdout.write(`${JSON.stringify(result)}\n`);
      return;
    }
    log(`${result.requests.toLocaleString('en-GB')} requests to POST /v1/verifications/identities/biometrics, ${result.people} people enrolled with one photo each`);
    log('');
    log('pairs @ score      | genuine trials | rejected (no face)    | impostor trials | false matches');
    log('-------------------|----------------|-----------------------|-----------------|---------------------');
    for (const [key, t] of Object.entries(result.groups)) {
      const rejected = t.genuineTrials > 0 ? `${pct(t.genuineRejected, t.genuineTrials, 1)} (${t.genuineRejected}; ${t.genuineNoFace})` : '–';
      log(`${key.padEnd(18)} | ${String(t.genuineTrials).padStart(14)} | ${rejected.padEnd(21)} | ${String(t.impostorTrials).padStart(15)} | ${pct(t.falseMatches, t.impostorTrials, 3)} (${t.falseMatches})`);
    }
    log('');
    log(`server CPU per request: ${result.serverCpuMsPerRequest.toFixed(1)} ms (${result.machine.cpus} CPUs, ${result.machine.cpu}, Node ${result.machine.node})`);
  } finally {
    await removeDir();
  }
}

await main();
