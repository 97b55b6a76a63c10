/**
 * The face model's thread, as source text. It runs as an `eval` worker so the same code starts
 * from the compiled `dist/`, from `tsx` and under Vitest (Node 20 cannot start a `.ts` worker file),
 * and it is plain CommonJS because face-api, TensorFlow.js and ONNX Runtime's Node build are. It
 * keeps the models' synchronous WASM work off the event loop: the API answers other requests while
 * a face is read.
 *
 * The pipeline (docs/biometrics.md, "The engine"): face-api finds the faces (TinyFaceDetector,
 * SSD MobileNet as the fallback) and the 68 landmarks of the largest; five of them (the eyes'
 * centres, the nose tip, the mouth's corners) fix the similarity transform that maps the face onto
 * the 112×112 template the descriptor model was trained on (ArcFace's five reference points); the
 * aligned face goes through fr_feature.onnx on ONNX Runtime's WASM backend, and its 512 numbers
 * are scaled to length 1, so the cosine distance of two faces is 1 − their dot product.
 *
 * Nothing comes from the network: the models are read from disk, and `fetch` is replaced in this
 * thread by one that refuses.
 *
 * Protocol (typed on the other side in face-engine.ts): in `{ id, pixels, width, height }` (RGB
 * bytes, transferred); out `{ id, faces, face }` with the largest face (box, detector score,
 * descriptor, quality), or `{ id, error }`.
 */
export const WORKER_SOURCE = String.raw`
'use strict';
const { parentPort, workerData } = require('node:worker_threads');
const fs = require('node:fs');

globalThis.fetch = async (resource) => {
  throw new Error('network access is disabled in the face model thread: ' + String(resource && resource.url ? resource.url : resource));
};

const faceapi = require(workerData.faceApiPath);
const ort = require(workerData.ortPath);
const tf = faceapi.tf;
const settings = workerData.settings;

// ArcFace's template: where the eyes, the nose tip and the mouth's corners sit in a 112×112 face.
const TEMPLATE = [[38.2946, 51.6963], [73.5318, 51.5014], [56.0252, 71.7366], [41.5493, 92.3655], [70.7299, 92.2041]];
const SIZE = 112;

let loaded;
function load() {
  loaded ??= (async () => {
    tf.env().set('PROD', true);
    await tf.setBackend('wasm');
    await tf.ready();
    const dir = workerData.modelDir;
    await Promise.all([
      faceapi.nets.tinyFaceDetector.loadFromDisk(dir),
      faceapi.nets.ssdMobilenetv1.loadFromDisk(dir),
      faceapi.nets.faceLandmark68Net.loadFromDisk(dir),
    ]);
    // One thread: the worker is the unit of parallelism, and the WASM backend's own threads would
    // compete with the API for the same cores.
    ort.env.wasm.numThreads = 1;
    ort.env.logLevel = 'error';
    return ort.InferenceSession.create(fs.readFileSync(workerData.featureModelPath), { executionProviders: ['wasm'] });
  })();
  return loaded;
}

const area = (detection) => detection.box.width * detection.box.height;

async function detect(input) {
  // The fast detector misses some faces at any one input size, and fewer over two; the slow one
  // is the last resort, paid only by images where the fast one found nothing.
  for (const inputSize of settings.tinyInputSizes) {
    const options = new faceapi.TinyFaceDetectorOptions({ inputSize, scoreThreshold: settings.tinyMinScore });
    const detections = await faceapi.detectAllFaces(input, options);
    if (detections.length > 0) return detections;
  }
  const thorough = new faceapi.SsdMobilenetv1Options({ minConfidence: settings.ssdMinConfidence, maxResults: 20 });
  return faceapi.detectAllFaces(input, thorough);
}

function centre(points) {
  let x = 0;
  let y = 0;
  for (const point of points) {
    x += point.x;
    y += point.y;
  }
  return [x / points.length, y / points.length];
}

/** The five points the template names, from face-api's 68 landmarks. */
function fivePoints(positions) {
  const at = (i) => [positions[i].x, positions[i].y];
  return [centre(positions.slice(36, 42)), centre(positions.slice(42, 48)), at(30), at(48), at(54)];
}

/**
 * The similarity (rotation, uniform scale, shift) that maps the points onto the template with the
 * least squared error (Umeyama's closed form without reflection): x' = a·x − b·y + tx, y' = b·x + a·y + ty.
 */
function similarity(points) {
  const n = points.length;
  let mx = 0, my = 0, ux = 0, uy = 0;
  for (let i = 0; i < n; i++) {
    mx += points[i][0]; my += points[i][1]; ux += TEMPLATE[i][0]; uy += TEMPLATE[i][1];
  }
  mx /= n; my /= n; ux /= n; uy /= n;
  let spread = 0, dot = 0, cross = 0;
  for (let i = 0; i < n; i++) {
    const x = points[i][0] - mx, y = points[i][1] - my, u = TEMPLATE[i][0] - ux, v = TEMPLATE[i][1] - uy;
    spread += x * x + y * y;
    dot += x * u + y * v;
    cross += x * v - y * u;
  }
  const a = dot / spread;
  const b = cross / spread;
  return { a, b, tx: ux - (a * mx - b * my), ty: uy - (b * mx + a * my) };
}

/** The aligned 112×112 face as the model's input: planar RGB, (value − 127.5) / 128, bilinear, black outside the image. */
function alignedInput(pixels, width, height, t) {
  const out = new Float32Array(3 * SIZE * SIZE);
  const det = t.a * t.a + t.b * t.b;
  const plane = SIZE * SIZE;
  const value = (x, y, c) => (x < 0 || y < 0 || x >= width || y >= height ? 0 : pixels[(y * width + x) * 3 + c]);
  for (let yo = 0; yo < SIZE; yo++) {
    for (let xo = 0; xo < SIZE; xo++) {
      // The inverse map: which source point lands on this output pixel.
      const dx = xo - t.tx, dy = yo - t.ty;
      const xs = (t.a * dx + t.b * dy) / det;
      const ys = (-t.b * dx + t.a * dy) / det;
      const x0 = Math.floor(xs), y0 = Math.floor(ys);
      const fx = xs - x0, fy = ys - y0;
      for (let c = 0; c < 3; c++) {
        const v = value(x0, y0, c) * (1 - fx) * (1 - fy) + value(x0 + 1, y0, c) * fx * (1 - fy) + value(x0, y0 + 1, c) * (1 - fx) * fy + value(x0 + 1, y0 + 1, c) * fx * fy;
        out[c * plane + yo * SIZE + xo] = (v - 127.5) / 128;
      }
    }
  }
  return out;
}

/**
 * How usable the aligned face is, from the model's own input (so every photo is judged at the
 * same scale): mean brightness (0–255) and the variance of the Laplacian (sharpness) of its luma
 * over the inner face (the template's eyes-to-mouth box, away from hair and background).
 */
function imageQuality(input) {
  const plane = SIZE * SIZE;
  const luma = new Float32Array(plane);
  for (let i = 0; i < plane; i++) {
    luma[i] = (0.299 * input[i] + 0.587 * input[plane + i] + 0.114 * input[2 * plane + i]) * 128 + 127.5;
  }
  let sum = 0;
  let count = 0;
  let lapSum = 0;
  let lapSquares = 0;
  for (let y = 32; y < 100; y++) {
    for (let x = 28; x < 84; x++) {
      const at = y * SIZE + x;
      sum += luma[at];
      count++;
      const lap = luma[at - 1] + luma[at + 1] + luma[at - SIZE] + luma[at + SIZE] - 4 * luma[at];
      lapSum += lap;
      lapSquares += lap * lap;
    }
  }
  const lapMean = lapSum / count;
  return { brightness: sum / count, sharpness: lapSquares / count - lapMean * lapMean };
}

/** Eye aspect ratio (Soukupová and Čech): the eye's height over its width, both eyes averaged; about 0.3 open, under 0.15 shut. */
function eyeOpenness(positions) {
  const d = (a, b) => Math.hypot(positions[a].x - positions[b].x, positions[a].y - positions[b].y);
  const ratio = (p) => (d(p + 1, p + 5) + d(p + 2, p + 4)) / (2 * d(p, p + 3) || 1);
  return (ratio(36) + ratio(42)) / 2;
}

async function descriptorOf(session, input) {
  const outputs = await session.run({ [session.inputNames[0]]: new ort.Tensor('float32', input, [1, 3, SIZE, SIZE]) });
  const raw = outputs[session.outputNames[0]].data;
  let norm = 0;
  for (const v of raw) norm += v * v;
  norm = Math.sqrt(norm) || 1;
  return Array.from(raw, (v) => v / norm);
}

async function describe(job) {
  const session = await load();
  const input = tf.tensor3d(job.pixels, [job.height, job.width, 3], 'int32');
  let detections;
  let positions;
  let largest;
  try {
    detections = await detect(input);
    if (detections.length === 0) return { id: job.id, faces: 0, face: null };
    largest = detections.reduce((best, candidate) => (area(candidate) > area(best) ? candidate : best));
    const parent = Promise.resolve(faceapi.extendWithFaceDetection({}, largest));
    const result = await new faceapi.DetectSingleFaceLandmarksTask(parent, input, false);
    if (!result) return { id: job.id, faces: detections.length, face: null };
    positions = result.landmarks.positions;
  } finally {
    input.dispose();
  }
  const aligned = alignedInput(job.pixels, job.width, job.height, similarity(fivePoints(positions)));
  const descriptor = await descriptorOf(session, aligned);
  const { x, y, width, height } = largest.box;
  const quality = { ...imageQuality(aligned), eyeOpenness: eyeOpenness(positions) };
  return {
    id: job.id,
    faces: detections.length,
    face: { box: { x, y, width, height }, score: largest.score, descriptor, quality },
  };
}

let queue = Promise.resolve();
parentPort.on('message', (job) => {
  // One face at a time: both WASM backends run single-threaded here, interleaving only adds latency.
  queue = queue.then(async () => {
    try {
      if (job.warmUp) {
        await load();
        parentPort.postMessage({ id: job.id, faces: 0, face: null });
      } else {
        parentPort.postMessage(await describe(job));
      }
    } catch (error) {
      parentPort.postMessage({ id: job.id, error: error && error.stack ? error.stack : String(error) });
    }
  });
});
`;
