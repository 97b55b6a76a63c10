import { createRequire } from 'node:module';
import path from 'node:path';
import { Worker } from 'node:worker_threads';
import type { DecodedImage } from './image.js';
import { WORKER_SOURCE } from './worker-source.js';

/** The largest face found in an image: where it is and its 128-number descriptor. */
export interface Face {
  box: { x: number; y: number; width: number; height: number };
  /** The detector's confidence, 0–1. */
  score: number;
  descriptor: Float32Array;
  /** How many faces the image held; the largest one is described. */
  facesFound: number;
}

export interface DetectorSettings {
  /** TinyFaceDetector input sizes (multiples of 32) tried in turn until one finds a face. */
  tinyInputSizes: number[];
  tinyMinScore: number;
  /** SSD MobileNet, the fallback when the fast detector finds nothing. */
  ssdMinConfidence: number;
}

export const DEFAULT_DETECTOR: DetectorSettings = { tinyInputSizes: [320, 224], tinyMinScore: 0.4, ssdMinConfidence: 0.4 };

type WorkerReply =
  | { id: number; faces: number; face: { box: Face['box']; score: number; descriptor: number[] } | null }
  | { id: number; error: string };

interface Pending {
  resolve(face: Face | undefined): void;
  reject(error: Error): void;
}

const require = createRequire(import.meta.url);

/**
 * Finds and describes faces with face-api (TensorFlow.js on its WASM backend, weights from the npm
 * package) on a worker thread of its own. The worker and the model start on first use, so
 * `vouch serve` starts as fast as before; the thread is unreferenced while idle, so it never keeps
 * a process alive; a crashed worker fails its pending requests and the next request starts anew.
 */
export class FaceEngine {
  private worker: Worker | undefined;
  private readonly pending = new Map<number, Pending>();
  private nextId = 1;

  constructor(private readonly settings: DetectorSettings = DEFAULT_DETECTOR) {}

  /** The largest face in the image, or undefined when there is none. */
  describe(image: DecodedImage): Promise<Face | undefined> {
    const { pixels, width, height } = image;
    return this.send({ pixels, width, height }, [pixels.buffer as ArrayBuffer]);
  }

  /** Starts the worker and loads the model now (benchmarks and tests use it to time load apart). */
  async warmUp(): Promise<void> {
    await this.send({ warmUp: true });
  }

  async close(): Promise<void> {
    const worker = this.worker;
    if (!worker) return;
    this.fail(worker, new Error('face engine closed'));
    await worker.terminate();
  }

  private send(message: object, transfer: ArrayBuffer[] = []): Promise<Face | undefined> {
    const worker = this.start();
    const id = this.nextId++;
    return new Promise<Face | undefined>((resolve, reject) => {
      this.pending.set(id, { resolve, reject });
      if (this.pending.size === 1) worker.ref();
      worker.postMessage({ ...message, id }, transfer);
    });
  }

  private start(): Worker {
    if (this.worker) return this.worker;
    const faceApiPath = require.resolve('@vladmandic/face-api/dist/face-api.node-wasm.js');
    const modelDir = path.join(path.dirname(faceApiPath), '..', 'model');
    const worker = new Worker(WORKER_SOURCE, {
      eval: true,
      workerData: { faceApiPath, modelDir, settings: this.settings },
      // The model's weights and activations stay well under this; a runaway image does not take the process.
      resourceLimits: { maxOldGenerationSizeMb: 512 },
    });
    worker.unref();
    worker.on('message', (reply: WorkerReply) => this.settle(reply));
    worker.on('error', (error) => this.fail(worker, error));
    worker.on('exit', (code) => this.fail(worker, new Error(`face model worker exited with code ${code}`)));
    this.worker = worker;
    return worker;
  }

  private settle(reply: WorkerReply): void {
    const pending = this.pending.get(reply.id);
    if (!pending) return;
    this.pending.delete(reply.id);
    if (this.pending.size === 0) this.worker?.unref();
    if ('error' in reply) {
      pending.reject(new Error(`face model failed: ${reply.error}`));
      return;
    }
    const { face, faces } = reply;
    pending.resolve(face ? { box: face.box, score: face.score, descriptor: Float32Array.from(face.descriptor), facesFound: faces } : undefined);
  }

  private fail(worker: Worker, error: Error): void {
    // Every pending request belongs to the current worker: a new one starts only after this.
    if (this.worker !== worker) return;
    this.worker = undefined;
    for (const pending of this.pending.values()) pending.reject(error);
    this.pending.clear();
  }
}

let shared: FaceEngine | undefined;

/** The process's one face engine: the model is loaded once per process, however many apps run in it. */
export function sharedFaceEngine(): FaceEngine {
  shared ??= new FaceEngine();
  return shared;
}
