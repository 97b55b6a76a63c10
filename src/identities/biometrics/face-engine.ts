import { createRequire } from 'node:module';
import path from 'node:path';
import { Worker } from 'node:worker_threads';
import { WorkerCalls } from '../../platform/worker-calls.js';
import type { DecodedImage } from './image.js';
import { verifiedModelPath } from './models.js';
import { WORKER_SOURCE } from './worker-source.js';

/** The largest face found in an image: where it is and its descriptor (512 numbers of length 1). */
export interface Face {
  box: { x: number; y: number; width: number; height: number };
  /** The detector's confidence, 0–1. */
  score: number;
  descriptor: Float32Array;
  /** How many faces the image held; the largest one is described. */
  facesFound: number;
  quality: FaceQuality;
}

/** What the engine saw of the described face's usability (quality.ts judges it). */
export interface FaceQuality {
  /** Mean brightness of the inner face, 0–255, as the model sees it. */
  brightness: number;
  /** Variance of the Laplacian of the inner face's luma at the model's 112 px: low is blurred or tiny. */
  sharpness: number;
  /** Eye aspect ratio, both eyes averaged: about 0.3 open, under 0.15 shut. */
  eyeOpenness: number;
}

export interface DetectorSettings {
  /**
   * TinyFaceDetector input sizes (multiples of 32) tried in turn until one finds a face. The small
   * ones find faces that fill the frame (registry portraits, close selfies), which the larger ones
   * miss: 320 and 224 alone missed clear frontal photos of Nelson Mandela, Thabo Mbeki and Eunice
   * Barber (docs/biometrics.md, "Detection").
   */
  tinyInputSizes: number[];
  tinyMinScore: number;
  /** SSD MobileNet, the fallback when the fast detector finds nothing. */
  ssdMinConfidence: number;
}

export const DEFAULT_DETECTOR: DetectorSettings = { tinyInputSizes: [320, 224, 160, 128], tinyMinScore: 0.4, ssdMinConfidence: 0.4 };

/** The descriptor model's name, as records and benchmarks report it. */
export const FACE_MODEL = 'fr_feature-512';

type WorkerReply =
  | { id: number; faces: number; face: { box: Face['box']; score: number; descriptor: number[]; quality: FaceQuality } | null }
  | { id: number; error: string };

const require = createRequire(import.meta.url);

/**
 * Finds faces with face-api (TensorFlow.js on its WASM backend, weights from the npm package) and
 * describes them with fr_feature.onnx (ONNX Runtime's WASM backend, the model from models/) on a
 * worker thread of its own (worker-source.ts says how). The worker and the model start on first use, so
 * `vouch serve` starts as fast as before; the thread is unreferenced while idle, so it never keeps
 * a process alive; a crashed worker fails its pending requests and the next request starts anew.
 */
export class FaceEngine {
  private calls: WorkerCalls<WorkerReply> | undefined;

  constructor(private readonly settings: DetectorSettings = DEFAULT_DETECTOR) {}

  /** The largest face in the image, or undefined when there is none. */
  describe(image: DecodedImage): Promise<Face | undefined> {
    const { pixels, width, height } = image;
    // The pixels are handed over to the worker (transferred): an image can be described once.
    if (pixels.byteLength !== width * height * 3) return Promise.reject(new Error(`face engine: the image holds ${pixels.byteLength} bytes, not ${width}×${height}×3 (already described?)`));
    return this.send({ pixels, width, height }, [pixels.buffer as ArrayBuffer]);
  }

  /** Starts the worker and loads the model now (benchmarks and tests use it to time load apart). */
  async warmUp(): Promise<void> {
    await this.send({ warmUp: true });
  }

  async close(): Promise<void> {
    await this.calls?.close(new Error('face engine closed'));
  }

  private async send(message: object, transfer: ArrayBuffer[] = []): Promise<Face | undefined> {
    const reply = await this.start().send(message, transfer);
    if ('error' in reply) throw new Error(`face model failed: ${reply.error}`);
    const { face, faces } = reply;
    return face ? { box: face.box, score: face.score, descriptor: Float32Array.from(face.descriptor), facesFound: faces, quality: face.quality } : undefined;
  }

  private start(): WorkerCalls<WorkerReply> {
    if (this.calls) return this.calls;
    const faceApiPath = require.resolve('@vladmandic/face-api/dist/face-api.node-wasm.js');
    const modelDir = path.join(path.dirname(faceApiPath), '..', 'model');
    const ortPath = require.resolve('onnxruntime-web');
    const featureModelPath = verifiedModelPath('feature');
    const worker = new Worker(WORKER_SOURCE, {
      eval: true,
      workerData: { faceApiPath, modelDir, ortPath, featureModelPath, settings: this.settings },
      // The model's weights and activations stay well under this; a runaway image does not take the process.
      resourceLimits: { maxOldGenerationSizeMb: 512 },
    });
    // A crashed worker fails its requests; the next request starts a new one.
    this.calls = new WorkerCalls<WorkerReply>(worker, 'face model worker', (gone) => {
      if (this.calls === gone) this.calls = undefined;
    });
    return this.calls;
  }
}

let shared: FaceEngine | undefined;

/** The process's one face engine: the model is loaded once per process, however many apps run in it. */
export function sharedFaceEngine(): FaceEngine {
  shared ??= new FaceEngine();
  return shared;
}
