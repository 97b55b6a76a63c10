import { type Command, InvalidArgumentError } from 'commander';
import { CliError, cliError, print } from '../../cli/support.js';
import type { LivenessDecision } from './engine.js';
import { MemoryPrintStore } from './print-store.js';
import { readRecordedAttempts, RecordingError } from './recording.js';
import type { LivenessThresholds } from './settings.js';

/** The thresholds an operator may try, as options; each defaults to the engine's. */
const TUNABLE = {
  turnDegrees: ['--turn-degrees <n>', 'yaw from the median pose that counts as a turn'],
  lookUpDegrees: ['--look-up-degrees <n>', 'pitch from the median pose that counts as looking up'],
  blinkRatio: ['--blink-ratio <n>', 'eye openness, as a share of its median, that counts as shut'],
  minSameFace: ['--min-same-face <n>', 'lowest embedding similarity of the described frames to the frontal one'],
  minAntispoof: ['--min-antispoof <n>', "lowest median anti-spoofing score (fr_liveness's real-face probability)"],
  replayBits: ['--replay-bits <n>', 'largest print distance (of 3072 bits) that counts as the same frame'],
  maxChallengeGapMs: ['--max-challenge-gap-ms <n>', 'longest wait between two movements'],
} as const satisfies Partial<Record<keyof LivenessThresholds, readonly [string, string]>>;

/** `--min-live` set a gate that no longer exists; a script that passes it is told, not ignored. */
const MIN_LIVE_REMOVED =
  "--min-live is no longer an option: Human's liveness score is reported but does not decide, as it did not tell printed faces from live ones (docs/liveness.md, \"Passive anti-spoofing\"); --min-antispoof sets the one passive gate";

function number(value: string): number {
  const parsed = Number(value);
  if (value.trim() === '' || !Number.isFinite(parsed) || parsed < 0) throw new InvalidArgumentError('must be a number of at least 0');
  return parsed;
}

const percent = (part: number, whole: number) => (whole === 0 ? '-' : `${Math.round((part / whole) * 1000) / 10}%`);

export interface ReplayLine {
  attempt: string;
  challenges: string[];
  passed: boolean;
  reasons: string[];
  scores: LivenessDecision['scores'];
  challengeTimes: (number | null)[];
  frontalFrame: number | null;
  cpuMs: number;
  expected: 'pass' | 'fail' | null;
}

function lineText(line: ReplayLine): string {
  const verdict = line.passed ? 'PASS' : `FAIL ${line.reasons.join(',')}`;
  const expected = line.expected === null ? '' : (line.expected === 'pass') === line.passed ? '  (as expected)' : `  (expected ${line.expected})`;
  const scores = `antispoof ${line.scores.antispoof.toFixed(2)} live ${line.scores.live.toFixed(2)} same-face ${line.scores.consistency.toFixed(2)}`;
  const times = line.challenges.map((challenge, i) => `${challenge}@${line.challengeTimes[i] ?? '-'}`).join(' ');
  return `${line.attempt}: ${verdict}${expected}\n  ${times}\n  ${scores}  frontal frame ${line.frontalFrame ?? '-'}  cpu ${line.cpuMs} ms`;
}

/**
 * `vouch liveness replay DIR`: runs recorded attempts through the engine with the thresholds
 * given, one after another in name order (so a frame recorded twice is refused as replayed the
 * second time, as the server would), and prints each decision and a summary.
 */
export async function replayRecordedAttempts(root: string, thresholds: Partial<LivenessThresholds>): Promise<{ lines: ReplayLine[]; summary: Record<string, unknown> }> {
  const attempts = await readRecordedAttempts(root);
  const { HumanLivenessEngine } = await import('./human-engine.js');
  const engine = new HumanLivenessEngine({ prints: new MemoryPrintStore(), thresholds });
  const lines: ReplayLine[] = [];
  for (const attempt of attempts) {
    const decision = await engine.decide({ attemptId: attempt.name, sessionId: attempt.sessionId, challenges: attempt.challenges, frames: attempt.frames, scope: { orgId: 'replay', mode: 'test' } });
    lines.push({
      attempt: attempt.name,
      challenges: attempt.challenges,
      passed: decision.passed,
      reasons: decision.reasons,
      scores: decision.scores,
      challengeTimes: decision.challenges.map((outcome) => outcome.atMs),
      frontalFrame: decision.frontalFrame,
      cpuMs: decision.cpuMs,
      expected: attempt.expected,
    });
  }
  const labelled = lines.filter((line) => line.expected !== null);
  const reasons: Record<string, number> = {};
  for (const line of lines) for (const reason of line.reasons) reasons[reason] = (reasons[reason] ?? 0) + 1;
  const sortedCpu = lines.map((line) => line.cpuMs).sort((a, b) => a - b);
  const summary = {
    attempts: lines.length,
    passed: lines.filter((line) => line.passed).length,
    failed: lines.filter((line) => !line.passed).length,
    reasons,
    expected: labelled.length,
    agreeing: labelled.filter((line) => (line.expected === 'pass') === line.passed).length,
    medianCpuMs: sortedCpu[Math.floor((sortedCpu.length - 1) / 2)] ?? 0,
    thresholds: engine.thresholds,
  };
  return { lines, summary };
}

export function registerLivenessCommands(program: Command): void {
  const liveness = program.command('liveness').description('the liveness check: replay recorded attempts to tune its thresholds');
  const replay = liveness
    .command('replay <dir>')
    .description('run recorded attempts (folders of attempt.json and JPEG frames; docs/liveness.md) through the engine and print each decision and a summary')
    .option('--json', 'one JSON line per attempt, then the summary');
  for (const [, [flags, description]] of Object.entries(TUNABLE)) replay.option(flags, description, number);
  replay.option('--min-live <n>', 'no longer a threshold (Human\'s liveness score does not decide); refused with a message');
  replay.action(async (dir: string, options: Record<string, unknown>) => {
    if (options.minLive !== undefined) throw new CliError(MIN_LIVE_REMOVED);
    const thresholds: Partial<LivenessThresholds> = {};
    for (const key of Object.keys(TUNABLE) as (keyof typeof TUNABLE)[]) {
      if (typeof options[key] === 'number') thresholds[key] = options[key];
    }
    let result;
    try {
      result = await replayRecordedAttempts(dir, thresholds);
    } catch (error) {
      if (error instanceof RecordingError) throw cliError(error);
      throw error;
    }
    const json = options.json === true;
    for (const line of result.lines) print(json, line, lineText(line));
    const s = result.summary as { attempts: number; passed: number; failed: number; reasons: Record<string, number>; expected: number; agreeing: number; medianCpuMs: number };
    const reasons = Object.entries(s.reasons).map(([reason, n]) => `${reason} ${n}`).join(', ') || 'none';
    const changed = Object.entries(thresholds).map(([key, value]) => `${key}=${value}`).join(' ') || 'defaults';
    print(
      json,
      { summary: result.summary },
      [
        `${s.attempts} attempts: ${s.passed} passed (${percent(s.passed, s.attempts)}), ${s.failed} failed`,
        `reasons: ${reasons}`,
        s.expected > 0 ? `agreeing with "expected": ${s.agreeing} of ${s.expected} (${percent(s.agreeing, s.expected)})` : 'no attempt says what it expected',
        `median CPU per decision: ${s.medianCpuMs} ms; thresholds changed: ${changed} (the rest at their defaults)`,
      ].join('\n'),
    );
  });
}
