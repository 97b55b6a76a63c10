/**
 * The liveness model's thread, as source text: an `eval` worker in plain CommonJS for the same
 * reasons as the face match's (biometrics/worker-source.ts). It runs @vladmandic/human on
 * TensorFlow.js's WASM backend with every model read from the npm package on disk: a load router
 * answers `file://` model URLs from the file system, and `fetch` is replaced inside this thread by
 * one that refuses, so no model, wasm binary or anything else can come from the network. Every
 * refused fetch is counted and reported (the test for "no network" reads the count).
 *
 * Passive anti-spoofing is not Human's: fr_liveness.onnx (models/faceplugin, a Silent-Face-style
 * classifier) runs on ONNX Runtime's WASM backend in this thread, on a crop cut from the frame's
 * own pixels around the pose pass's face box (livenessInput below). Human's anti-spoofing model
 * ranked live faces above printed ones no better than chance (docs/liveness.md, "Passive
 * anti-spoofing"), so it is loaded only when a measurement asks for it (workerData.humanAntispoof).
 * Human's liveness model still runs (~1 ms a face): its score is reported, not used to decide.
 *
 * Where the CPU goes (docs/liveness.md, "CPU"): the face detector (BlazeFace, ~26 ms a frame) and
 * the identity model (faceres, ~92 ms a face) dominate; the mesh is ~5 ms, the iris model ~10 ms.
 * So the pose pass runs the detector on the first frame, every DETECT_EVERY-th frame and any frame
 * where the face was lost or its box jumped, and follows the face with the mesh in between (the box of each frame
 * comes from the previous frame's mesh, as MediaPipe does); the iris model runs only when the
 * attempt asks for a blink. The describe pass does not detect again: it runs the identity and
 * liveness models on the face crops the pose pass already cut (human's own input to them), kept
 * until then, as one batch, and fr_liveness (~15 ms a face) on each described frame's pixels,
 * kept with them.
 *
 * Protocol (typed on the other side in analyzer.ts):
 *   { id, type: 'warmUp' }                      -> { id, backend, models, refusedFetches }
 *   { id, type: 'pose', job, frames, iris }     -> { id, poses, detected, ms }  ms: this thread's CPU time; frames: [{ pixels, width, height }] (RGB, transferred); the main face crops, frames and boxes are kept for 'describe'
 *   { id, type: 'describe', job, indexes }      -> { id, described, ms }  described: [{ index, embedding, real, live, humanReal? }]; then the job is dropped
 *   { id, type: 'release', job }                -> { id }
 * or { id, error } for any of them.
 */
export const WORKER_SOURCE = String.raw`
'use strict';
const { parentPort, workerData } = require('node:worker_threads');
const fs = require('node:fs');
const path = require('node:path');

let refusedFetches = 0;
globalThis.fetch = async (resource) => {
  refusedFetches += 1;
  throw new Error('network access is disabled in the liveness model thread: ' + String(resource && resource.url ? resource.url : resource));
};

const tf = require(workerData.tfjsCorePath);
const { Human } = require(workerData.humanPath);
const ort = require(workerData.ortPath);

// Model URLs are file:// paths into the package's models folder; tfjs asks each router in turn.
tf.io.registerLoadRouter((url) => {
  if (typeof url !== 'string' || !url.startsWith('file://')) return null;
  const file = url.slice('file://'.length);
  return {
    load: async () => {
      const modelJson = JSON.parse(fs.readFileSync(file, 'utf8'));
      return tf.io.getModelArtifactsForJSON(modelJson, async (manifest) => {
        const specs = [];
        const parts = [];
        for (const group of manifest) {
          for (const part of group.paths) parts.push(fs.readFileSync(path.join(path.dirname(file), part)));
          specs.push(...group.weights);
        }
        const all = Buffer.concat(parts);
        return [specs, all.buffer.slice(all.byteOffset, all.byteOffset + all.byteLength)];
      });
    },
  };
});

const off = { enabled: false };
const human = new Human({
  backend: 'wasm',
  wasmPath: workerData.wasmDir,
  modelBasePath: 'file://' + workerData.modelDir + '/',
  debug: false,
  warmup: 'none',
  // Frames of one attempt look alike: the result cache would hand back another frame's answer.
  cacheSensitivity: 0,
  skipAllowed: false,
  filter: { enabled: false },
  face: {
    enabled: true,
    // return: each face's crop (the mesh's input) comes back with the result, for the describe pass.
    detector: { rotation: false, maxDetected: 3, minConfidence: workerData.minFaceScore, return: true },
    mesh: { enabled: true },
    iris: { enabled: true },
    attention: off,
    description: { enabled: true },
    emotion: off,
    antispoof: { enabled: workerData.humanAntispoof === true },
    liveness: { enabled: true },
    gear: off,
  },
  body: off, hand: off, object: off, segmentation: off, gesture: off,
});

// The pose pass: where the faces are, where the main one looks, how open its eyes are. DETECT runs
// the face detector; TRACK follows the faces of the previous frame with the mesh alone: human
// reuses its boxes when the frame counts as unchanged, which a cacheSensitivity this large makes
// every frame, and skipFrames/skipTime this large never expire. Only the face module caches
// here: the models that cache results of their own (identity, anti-spoofing) are off in this pass.
const FOLLOW = { skipFrames: 1e9, skipTime: 1e12 };
const DETECT = { cacheSensitivity: 0, face: { detector: FOLLOW, description: off, antispoof: off, liveness: off } };
const TRACK = { cacheSensitivity: 1e12, face: { detector: FOLLOW, description: off, antispoof: off, liveness: off } };
const DETECT_EVERY = workerData.detectEvery || 3;

let loaded;
let antispoofSession;
function load() {
  loaded ??= (async () => {
    await human.load();
    await human.tf.ready();
    // One thread: this worker is the unit of parallelism, as in the face match's thread.
    ort.env.wasm.numThreads = 1;
    ort.env.logLevel = 'error';
    antispoofSession = await ort.InferenceSession.create(fs.readFileSync(workerData.antispoofModelPath), { executionProviders: ['wasm'] });
  })();
  return loaded;
}

// fr_liveness's input, as Silent-Face's CropImage makes it: the face box enlarged CROP_SCALE times
// about its centre (less where the frame is too small, the same factor both ways), shifted back
// inside the frame, resized bilinearly (OpenCV's half-pixel centres) to 128×128; raw 0..255
// values, planar, in BGR order, OpenCV's (in RGB order it ranked NUAA's live faces above its
// prints no better than chance: AUC 0.47 against 0.94; bench/pad-accuracy.ts).
const CROP_SIZE = 128;
const CROP_SCALE = workerData.antispoofCropScale;
function livenessInput(frame, box) {
  const [x, y, w, h] = box;
  const W = frame.width;
  const H = frame.height;
  const scale = Math.min((H - 1) / Math.max(h, 1), (W - 1) / Math.max(w, 1), CROP_SCALE);
  const cx = x + w / 2;
  const cy = y + h / 2;
  let left = cx - (w * scale) / 2;
  let top = cy - (h * scale) / 2;
  let right = cx + (w * scale) / 2;
  let bottom = cy + (h * scale) / 2;
  if (left < 0) { right -= left; left = 0; }
  if (top < 0) { bottom -= top; top = 0; }
  if (right > W - 1) { left -= right - W + 1; right = W - 1; }
  if (bottom > H - 1) { top -= bottom - H + 1; bottom = H - 1; }
  const x0 = Math.max(0, Math.trunc(left));
  const y0 = Math.max(0, Math.trunc(top));
  const cw = Math.trunc(right) - x0 + 1;
  const ch = Math.trunc(bottom) - y0 + 1;
  const plane = CROP_SIZE * CROP_SIZE;
  const out = new Float32Array(3 * plane);
  const px = frame.pixels;
  for (let oy = 0; oy < CROP_SIZE; oy++) {
    const sy = Math.min(Math.max(((oy + 0.5) * ch) / CROP_SIZE - 0.5, 0), ch - 1);
    const ya = Math.floor(sy);
    const yb = Math.min(ya + 1, ch - 1);
    const fy = sy - ya;
    for (let ox = 0; ox < CROP_SIZE; ox++) {
      const sx = Math.min(Math.max(((ox + 0.5) * cw) / CROP_SIZE - 0.5, 0), cw - 1);
      const xa = Math.floor(sx);
      const xb = Math.min(xa + 1, cw - 1);
      const fx = sx - xa;
      const a = ((y0 + ya) * W + x0 + xa) * 3;
      const b = ((y0 + ya) * W + x0 + xb) * 3;
      const c = ((y0 + yb) * W + x0 + xa) * 3;
      const d = ((y0 + yb) * W + x0 + xb) * 3;
      for (let channel = 0; channel < 3; channel++) {
        const upper = px[a + channel] + (px[b + channel] - px[a + channel]) * fx;
        const lower = px[c + channel] + (px[d + channel] - px[c + channel]) * fx;
        out[(2 - channel) * plane + oy * CROP_SIZE + ox] = upper + (lower - upper) * fy;
      }
    }
  }
  return out;
}

/** fr_liveness's probability that the face is real: the softmax of its first of three logits. */
async function realOf(frame, box) {
  const input = new ort.Tensor('float32', livenessInput(frame, box), [1, 3, CROP_SIZE, CROP_SIZE]);
  const output = await antispoofSession.run({ input });
  try {
    const logits = output.output.data;
    const top = Math.max(logits[0], logits[1], logits[2]);
    const exps = [0, 1, 2].map((i) => Math.exp(logits[i] - top));
    return exps[0] / (exps[0] + exps[1] + exps[2]);
  } finally {
    input.dispose();
    output.output.dispose();
  }
}

const DEG = 180 / Math.PI;
const distance = (a, b) => Math.hypot(a[0] - b[0], a[1] - b[1]);
/** Lid gap over eye width at the middle of the eye; about 0.3-0.4 open, under 0.2 shut. */
function eyeOpenness(upper, lower) {
  if (!upper || !lower || upper.length < 7 || lower.length < 9) return null;
  const width = distance(lower[0], lower[8]);
  return width > 0 ? distance(upper[3], lower[4]) / width : null;
}
const area = (face) => face.box[2] * face.box[3];

function toTensor(frame) {
  return human.tf.tensor3d(frame.pixels, [frame.height, frame.width, 3], 'int32');
}

// CPU time of this thread (Linux: /proc/thread-self, in ticks of 10 ms), not wall time, which a
// busy machine stretches; elsewhere wall time stands in.
function cpuNow() {
  try {
    const stat = fs.readFileSync('/proc/thread-self/stat', 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(fields[11]) + Number(fields[12])) * 10;
  } catch {
    return performance.now();
  }
}

const jobs = new Map();

function disposeCrops(crops) {
  for (const crop of crops) if (crop) crop.dispose();
}

function disposeFaces(faces) {
  for (const face of faces) if (face.tensor) face.tensor.dispose();
}

const largest = (faces) => (faces.length ? faces.reduce((best, face) => (area(face) > area(best) ? face : best)) : null);

// A followed face whose box moved more than a quarter of its width, or grew or shrank by a
// quarter, from the frame before.
function jumped(before, face) {
  if (!before || !face) return false;
  const [x0, y0, w0, h0] = before;
  const [x1, y1, w1, h1] = face.box;
  const shift = Math.hypot(x1 + w1 / 2 - (x0 + w0 / 2), y1 + h1 / 2 - (y0 + h0 / 2)) / Math.max(w0, 1);
  return shift > 0.25 || Math.abs(Math.log(Math.max(w1, 1) / Math.max(w0, 1))) > Math.log(1.25);
}

async function detectFrame(frame, config) {
  const input = toTensor(frame);
  try {
    return await human.detect(input, config);
  } finally {
    input.dispose();
  }
}

async function pose(message) {
  await load();
  const started = cpuNow();
  const eyes = { iris: { enabled: message.iris === true } };
  const detect = { ...DETECT, face: { ...DETECT.face, ...eyes } };
  const track = { ...TRACK, face: { ...TRACK.face, ...eyes } };
  const poses = [];
  const crops = [];
  // The frame and face box of each main face: fr_liveness reads the frame's own pixels.
  const sources = [];
  let detected = 0;
  let lost = true;
  let previous = null;
  try {
    for (let index = 0; index < message.frames.length; index++) {
      const frame = message.frames[index];
      const detecting = lost || index % DETECT_EVERY === 0;
      let result = await detectFrame(frame, detecting ? detect : track);
      const followed = result;
      if (detecting) detected += 1;
      else if (result.face.length === 0 || jumped(previous, largest(result.face))) {
        // The mesh lost the face, or its box moved far from the one it followed (the face moved
        // fast, or another took its place): look again, so that a cut shows where it happened.
        disposeFaces(result.face);
        result = await detectFrame(frame, detect);
        detected += 1;
      }
      const main = largest(result.face);
      previous = main ? main.box : null;
      const fresh = detecting || result !== followed;
      for (const face of result.face) if (face !== main && face.tensor) face.tensor.dispose();
      crops.push(main && main.tensor ? main.tensor : null);
      sources.push(main ? { frame, box: main.box.map(Math.round) } : null);
      lost = !main;
      const faces = result.face.map((face) => ({ box: face.box.map(Math.round), score: face.score }));
      const angle = main && main.rotation ? main.rotation.angle : null;
      poses.push({
        width: frame.width,
        height: frame.height,
        detected: fresh,
        faces,
        main: main && angle ? {
          box: main.box.map(Math.round),
          score: main.score,
          yaw: angle.yaw * DEG,
          pitch: angle.pitch * DEG,
          roll: angle.roll * DEG,
          eyes: [eyeOpenness(main.annotations.leftEyeUpper0, main.annotations.leftEyeLower0), eyeOpenness(main.annotations.rightEyeUpper0, main.annotations.rightEyeLower0)],
        } : null,
      });
    }
  } catch (error) {
    disposeCrops(crops);
    throw error;
  }
  jobs.set(message.job, { crops, sources });
  return { poses, detected, ms: cpuNow() - started };
}

// What human's own face pipeline does with a face crop (src/face/faceres.ts, antispoof.ts,
// liveness.ts): resized to the model's input, faceres's scaled back to 0..255. The crops go
// through each model as one batch (faceres: ~15 % less CPU per face than one at a time).
function resizedFor(model, batch) {
  const [height, width] = model.inputs[0].shape.slice(1, 3);
  return human.tf.image.resizeBilinear(batch, [height, width], false);
}

async function scoresOf(model, batch) {
  const resized = resizedFor(model, batch);
  const output = model.execute(resized);
  try {
    // The first output of each row, as human reads data()[0] for a single face.
    const values = await output.data();
    const stride = values.length / batch.shape[0];
    return Array.from({ length: batch.shape[0] }, (_, row) => Math.round(100 * values[row * stride]) / 100);
  } finally {
    human.tf.dispose([resized, output]);
  }
}

async function embeddingsOf(model, batch) {
  const resized = resizedFor(model, batch);
  const scaled = human.tf.mul(resized, 255);
  const outputs = model.execute(scaled);
  try {
    const descriptor = outputs.find((tensor) => tensor.shape[1] === 1024);
    if (!descriptor) return [];
    const values = await descriptor.data();
    return Array.from({ length: batch.shape[0] }, (_, row) => Array.from(values.subarray(row * 1024, (row + 1) * 1024)));
  } finally {
    human.tf.dispose([resized, scaled, ...outputs]);
  }
}

async function describe(message) {
  await load();
  const started = cpuNow();
  const job = jobs.get(message.job);
  jobs.delete(message.job);
  if (!job) throw new Error('unknown liveness job ' + message.job);
  const { crops, sources } = job;
  try {
    const { faceres, antispoof, liveness } = human.models.models;
    if (!faceres || !liveness || (workerData.humanAntispoof && !antispoof)) throw new Error('liveness describe models are not loaded');
    const indexes = message.indexes.filter((index) => crops[index] && sources[index]);
    const described = message.indexes.map(() => null);
    if (indexes.length > 0) {
      const batch = human.tf.stack(indexes.map((index) => crops[index]));
      try {
        const embeddings = await embeddingsOf(faceres, batch);
        const live = await scoresOf(liveness, batch);
        const humanReal = workerData.humanAntispoof ? await scoresOf(antispoof, batch) : null;
        for (const [row, index] of indexes.entries()) {
          const embedding = embeddings[row];
          if (!embedding || !embedding.length) continue;
          const real = await realOf(sources[index].frame, sources[index].box);
          described[message.indexes.indexOf(index)] = { index, embedding, real, live: live[row] ?? 0, ...(humanReal ? { humanReal: humanReal[row] ?? 0 } : {}) };
        }
      } finally {
        batch.dispose();
      }
    }
    return { described, ms: cpuNow() - started };
  } finally {
    disposeCrops(crops);
  }
}

let queue = Promise.resolve();
parentPort.on('message', (message) => {
  // One job at a time: the WASM backend is single-threaded, interleaving only adds latency.
  queue = queue.then(async () => {
    try {
      if (message.type === 'warmUp') {
        await load();
        const models = human.models.list().filter((model) => model.loaded).map((model) => ({ name: model.name, url: String(model.url) }));
        models.push({ name: 'fr_liveness', url: 'file://' + workerData.antispoofModelPath });
        parentPort.postMessage({ id: message.id, backend: human.tf.getBackend(), models, refusedFetches, tensors: human.tf.memory().numTensors });
      } else if (message.type === 'pose') {
        parentPort.postMessage({ id: message.id, ...(await pose(message)) });
      } else if (message.type === 'describe') {
        parentPort.postMessage({ id: message.id, ...(await describe(message)) });
      } else if (message.type === 'release') {
        disposeCrops(jobs.get(message.job)?.crops || []);
        jobs.delete(message.job);
        parentPort.postMessage({ id: message.id });
      } else {
        throw new Error('unknown message type ' + message.type);
      }
    } catch (error) {
      parentPort.postMessage({ id: message.id, error: error && error.stack ? error.stack : String(error) });
    }
  });
});
`;
