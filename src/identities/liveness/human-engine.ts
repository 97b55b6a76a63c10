import { type FrameAnalyzer, type FramePose, sharedFrameAnalyzer } from './analyzer.js';
import { decideFromAnalysis, framesToDescribe } from './decide.js';
import type { LivenessAttempt, LivenessDecision, LivenessEngine } from './engine.js';
import { type DecodedFrame, decodeFrame } from './frames.js';
import type { FramePrintStore, PrintOwner } from './print-store.js';
import { DEFAULT_THRESHOLDS, LIVENESS_CAPTURE, type LivenessThresholds } from './settings.js';

/** How long frame prints are kept when the caller does not say (the default photo retention). */
export const DEFAULT_PRINT_RETENTION_DAYS = 365;

export interface HumanLivenessEngineOptions {
  prints: FramePrintStore;
  thresholds?: Partial<LivenessThresholds>;
  /** The model thread; the process's shared one by default. */
  analyzer?: FrameAnalyzer;
  /**
   * When the iris model reads the eyes: `blink` (default) only for attempts that ask for a blink,
   * the mesh's eyelids otherwise (enough to pick a frontal frame with open eyes); `always`;
   * `never` (the mesh's eyelids for blinks too).
   */
  iris?: 'blink' | 'always' | 'never';
  /** Whether attempts without `scope` are refused (a database store needs one). */
  requireScope?: boolean;
  now?: () => Date;
}

/**
 * The liveness engine on @vladmandic/human (docs/liveness.md): frames decoded and shrunk here,
 * faces, poses and eyes of every frame and identity and anti-spoofing of the frames that matter
 * on the model thread, prints checked against earlier attempts, then the pure decision.
 */
export class HumanLivenessEngine implements LivenessEngine {
  readonly thresholds: LivenessThresholds;
  private readonly analyzer: FrameAnalyzer;
  private readonly now: () => Date;
  private readonly iris: 'blink' | 'always' | 'never';

  constructor(private readonly options: HumanLivenessEngineOptions) {
    this.thresholds = { ...DEFAULT_THRESHOLDS, ...options.thresholds };
    this.analyzer = options.analyzer ?? sharedFrameAnalyzer();
    this.now = options.now ?? (() => new Date());
    this.iris = options.iris ?? 'blink';
  }

  async ready(): Promise<void> {
    await this.analyzer.warmUp();
  }

  async decide(attempt: LivenessAttempt): Promise<LivenessDecision> {
    if (!attempt.scope && this.options.requireScope) throw new Error('liveness attempt without a scope: frame prints are kept per organization and mode');
    const limits = this.thresholds;
    const owner: PrintOwner = {
      scope: attempt.scope ?? { orgId: 'unscoped', mode: 'test' },
      sessionId: attempt.sessionId,
      attemptId: attempt.attemptId,
    };
    const frames = attempt.frames.slice(0, limits.maxFrames);
    const times = frames.map((frame) => frame.atMs);
    let cpuMs = 0;

    // Decoding runs on sharp's threads: the process's CPU time over it (anything else the process
    // does meanwhile counts too, so it is an upper bound), not wall time, which a busy machine stretches.
    const decodeStarted = process.cpuUsage();
    const decoded: (DecodedFrame | undefined)[] = [];
    for (const frame of frames) decoded.push(await decodeFrame(frame.jpeg, LIVENESS_CAPTURE.maxWidth));
    const decodeCpu = process.cpuUsage(decodeStarted);
    cpuMs += (decodeCpu.user + decodeCpu.system) / 1000;

    const prints = decoded.flatMap((frame) => (frame ? [frame.print] : []));
    const replayedFrames = await this.options.prints.countReplayed(owner, prints, limits.replayBits);
    const retainUntil = attempt.retainUntil ?? new Date(this.now().getTime() + DEFAULT_PRINT_RETENTION_DAYS * 86_400_000);
    await this.options.prints.remember(owner, prints, retainUntil);

    // Only frames that decoded go to the model thread; `positions` maps its numbering back.
    const positions = decoded.flatMap((frame, index) => (frame ? [index] : []));
    const poses: (FramePose | null)[] = frames.map(() => null);
    let described: { index: number; embedding: number[]; real: number; live: number }[] = [];
    if (frames.length >= limits.minFrames && positions.length > 0) {
      const analysed = await this.analyzer.analyze(
        positions.map((index) => decoded[index]!.small),
        (posed) => {
          posed.forEach((pose, i) => (poses[positions[i]!] = pose));
          const wanted = framesToDescribe(attempt.challenges, poses, times, limits);
          return wanted.map((index) => positions.indexOf(index)).filter((i) => i >= 0);
        },
        { iris: this.iris === 'always' || (this.iris === 'blink' && attempt.challenges.includes('blink')) },
      );
      described = analysed.described.map((item) => ({ ...item, index: positions[item.index]! }));
      cpuMs += analysed.ms;
    }
    // Frames that did not decode stay null; the decision counts them.
    const analysis = { challenges: attempt.challenges, times, poses: decoded.map((frame, i) => (frame ? (poses[i] ?? emptyPose(frame)) : null)), described, replayedFrames };
    const decision = decideFromAnalysis(analysis, limits);
    return { ...decision, cpuMs: Math.round(cpuMs) };
  }
}

/** A decoded frame the models never saw (too few frames to analyse): no face in it. */
function emptyPose(frame: DecodedFrame): FramePose {
  return { width: frame.rgb.width, height: frame.rgb.height, faces: [], main: null };
}

export function createLivenessEngine(options: HumanLivenessEngineOptions): HumanLivenessEngine {
  return new HumanLivenessEngine(options);
}
