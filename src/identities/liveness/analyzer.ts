import { createRequire } from 'node:module';
import path from 'node:path';
import { Worker } from 'node:worker_threads';
import { WorkerCalls } from '../../platform/worker-calls.js';
import { verifiedModelPath } from '../biometrics/models.js';
import { WORKER_SOURCE } from './worker-source.js';

/** RGB bytes of one decoded frame; `pixels` owns its buffer (it is handed to the model thread). */
export interface RgbFrame {
  pixels: Uint8Array;
  width: number;
  height: number;
}

/** The main (largest) face of a frame as the pose pass sees it. Angles in degrees. */
export interface FacePose {
  box: [number, number, number, number];
  score: number;
  /** Negative: the person turned to their left (frames as the camera took them, not mirrored). */
  yaw: number;
  /** Negative: the person looked up. */
  pitch: number;
  roll: number;
  /** Lid gap over eye width, [left, right]; null where the mesh had no eye. */
  eyes: [number | null, number | null];
}

export interface FramePose {
  width: number;
  height: number;
  /** False where the mesh followed the face from the frame before instead of the detector finding it. */
  detected?: boolean;
  faces: { box: [number, number, number, number]; score: number }[];
  main: FacePose | null;
}

export interface FrameDescription {
  index: number;
  /** The face model's identity embedding (1024 numbers). */
  embedding: number[];
  /** fr_liveness's probability that the face is real, 0 (spoof) .. 1 (real): the passive gate. */
  real: number;
  /** Human's liveness score, 0..1: reported, not a gate (docs/liveness.md says why). */
  live: number;
  /** Human's anti-spoofing score, 0..1: only when the analyzer was asked for it (measurements). */
  humanReal?: number;
}

export interface AnalyzerOptions {
  minFaceScore: number;
  /** The face detector runs on every n-th frame (and wherever the face was lost); 3 by default. */
  detectEvery?: number;
  /** fr_liveness's crop: the face box enlarged this many times about its centre (ANTISPOOF_CROP_SCALE by default). */
  antispoofCropScale?: number;
  /** Also run Human's anti-spoofing model and report its score as `humanReal` (for measurements; the engine does not). */
  humanAntispoof?: boolean;
}

export interface ModelStatus {
  backend: string;
  models: { name: string; url: string }[];
  /** Fetches the model thread refused (anything that tried to reach the network). */
  refusedFetches: number;
  /** Tensors alive in the model thread (the models' weights and nothing left over from decisions). */
  tensors: number;
}

type Reply =
  | ({ id: number } & ModelStatus)
  | { id: number; poses: FramePose[]; detected: number; ms: number }
  | { id: number; described: (FrameDescription | null)[]; ms: number }
  | { id: number }
  | { id: number; error: string };

const require = createRequire(import.meta.url);

/**
 * fr_liveness's crop around Human's face box. Silent-Face crops 2.7 times a tight detector box;
 * Human's box is already the detector's enlarged 1.4 times (and squared), so 2.7 / 1.4 frames the
 * same region. docs/liveness.md has what each factor measured.
 */
export const ANTISPOOF_CROP_SCALE = 2.7 / 1.4;

/**
 * Runs the face models of the liveness check (@vladmandic/human on TensorFlow.js's WASM backend,
 * fr_liveness on ONNX Runtime's) on a worker thread of its own, started on first use and
 * unreferenced while idle, like the face match's engine. A crashed worker fails its pending
 * requests; the next request starts a new one.
 */
export class FrameAnalyzer {
  private calls: WorkerCalls<Reply> | undefined;
  private nextJob = 1;

  constructor(private readonly options: AnalyzerOptions = { minFaceScore: 0.5 }) {}

  /** Starts the thread and loads every model now; says which models loaded from where. */
  async warmUp(): Promise<ModelStatus> {
    const reply = (await this.send({ type: 'warmUp' })) as { id: number } & ModelStatus;
    return { backend: reply.backend, models: reply.models, refusedFetches: reply.refusedFetches, tensors: reply.tensors };
  }

  /**
   * Face, pose and eyes of every frame, then identity and anti-spoofing scores of the frames that
   * `choose` picks from the poses, on the face crops of the pose pass. The frames go to the thread
   * once. `iris`: run the iris model for the eyes (needed for a blink; the mesh's eyelids
   * otherwise). `ms` is the thread's CPU time; `detected`, how many frames ran the face detector
   * (the others followed the face from the frame before).
   */
  async analyze(
    frames: RgbFrame[],
    choose: (poses: FramePose[]) => number[],
    options: { iris: boolean } = { iris: true },
  ): Promise<{ poses: FramePose[]; described: FrameDescription[]; detected: number; ms: number }> {
    const job = this.nextJob++;
    const transfer = frames.map((frame) => frame.pixels.buffer as ArrayBuffer);
    const posed = (await this.send({ type: 'pose', job, frames, iris: options.iris }, transfer)) as { poses: FramePose[]; detected: number; ms: number };
    let indexes: number[];
    try {
      indexes = choose(posed.poses);
    } catch (error) {
      await this.send({ type: 'release', job });
      throw error;
    }
    const described = (await this.send({ type: 'describe', job, indexes })) as { described: (FrameDescription | null)[]; ms: number };
    return {
      poses: posed.poses,
      described: described.described.filter((item): item is FrameDescription => item !== null),
      detected: posed.detected,
      ms: posed.ms + described.ms,
    };
  }

  async close(): Promise<void> {
    await this.calls?.close(new Error('liveness analyzer closed'));
  }

  private async send(message: object, transfer: ArrayBuffer[] = []): Promise<Reply> {
    const reply = await this.start().send(message, transfer);
    if ('error' in reply) throw new Error(`liveness model failed: ${reply.error}`);
    return reply;
  }

  private start(): WorkerCalls<Reply> {
    if (this.calls) return this.calls;
    // The package's exports map hides its WASM build: find it next to the entry point it does export.
    const humanPath = path.join(path.dirname(require.resolve('@vladmandic/human')), 'human.node-wasm.js');
    const modelDir = path.join(path.dirname(humanPath), '..', 'models');
    const fromHuman = createRequire(humanPath);
    const tfjsCorePath = fromHuman.resolve('@tensorflow/tfjs-core');
    const wasmDir = path.dirname(fromHuman.resolve('@tensorflow/tfjs-backend-wasm/dist/tfjs-backend-wasm.wasm')) + path.sep;
    const worker = new Worker(WORKER_SOURCE, {
      eval: true,
      workerData: {
        humanPath,
        modelDir,
        tfjsCorePath,
        wasmDir,
        ortPath: require.resolve('onnxruntime-web'),
        antispoofModelPath: verifiedModelPath('liveness'),
        antispoofCropScale: this.options.antispoofCropScale ?? ANTISPOOF_CROP_SCALE,
        humanAntispoof: this.options.humanAntispoof === true,
        minFaceScore: this.options.minFaceScore,
        detectEvery: this.options.detectEvery ?? 3,
      },
      resourceLimits: { maxOldGenerationSizeMb: 768 },
    });
    this.calls = new WorkerCalls<Reply>(worker, 'liveness model worker', (gone) => {
      if (this.calls === gone) this.calls = undefined;
    });
    return this.calls;
  }
}

let shared: FrameAnalyzer | undefined;

/** The process's one liveness model thread: loaded once per process, however many apps run in it. */
export function sharedFrameAnalyzer(): FrameAnalyzer {
  shared ??= new FrameAnalyzer();
  return shared;
}
