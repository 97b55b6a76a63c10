/**
 * The liveness model's thread, as source text: an `eval` worker in plain CommonJS for the same
 * reasons as the face match's (biometrics/worker-source.ts). It runs @vladmandic/human on
 * TensorFlow.js's WASM backend with every model read from the npm package on disk: a load router
 * answers `file://` model URLs from the file system, and `fetch` is replaced inside this thread by
 * one that refuses, so no model, wasm binary or anything else can come from the network. Every
 * refused fetch is counted and reported (the test for "no network" reads the count).
 *
 * Protocol (typed on the other side in analyzer.ts):
 *   { id, type: 'warmUp' }                      -> { id, backend, models, refusedFetches }
 *   { id, type: 'pose', job, frames }           -> { id, poses, ms }      ms: this thread's CPU time      frames: [{ small, rgb }], each { pixels, width, height } (RGB, transferred); kept for 'describe'
 *   { id, type: 'describe', job, indexes }      -> { id, described, ms }  then the job's frames are dropped
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
    detector: { rotation: false, maxDetected: 3, minConfidence: workerData.minFaceScore, return: false },
    mesh: { enabled: true },
    iris: { enabled: true },
    attention: off,
    description: { enabled: true },
    emotion: off,
    antispoof: { enabled: true },
    liveness: { enabled: true },
    gear: off,
  },
  body: off, hand: off, object: off, segmentation: off, gesture: off,
});

// The pose pass: where the faces are, where the main one looks, how open its eyes are.
const POSE = { face: { iris: { enabled: true }, description: off, antispoof: off, liveness: off } };
// The describe pass: who the face is and whether it looks live; the eyes are not needed again.
const DESCRIBE = { face: { iris: off, description: { enabled: true }, antispoof: { enabled: true }, liveness: { enabled: true } } };

let loaded;
function load() {
  loaded ??= human.load().then(() => human.tf.ready());
  return loaded;
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

async function pose(message) {
  await load();
  const started = cpuNow();
  jobs.set(message.job, message.frames);
  const poses = [];
  for (const { small: frame } of message.frames) {
    const input = toTensor(frame);
    let result;
    try {
      result = await human.detect(input, POSE);
    } finally {
      input.dispose();
    }
    const faces = result.face.map((face) => ({ box: face.box.map(Math.round), score: face.score }));
    const main = result.face.length ? result.face.reduce((best, face) => (area(face) > area(best) ? face : best)) : null;
    const angle = main && main.rotation ? main.rotation.angle : null;
    poses.push({
      width: frame.width,
      height: frame.height,
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
  return { poses, ms: cpuNow() - started };
}

async function describe(message) {
  await load();
  const started = cpuNow();
  const frames = jobs.get(message.job);
  jobs.delete(message.job);
  if (!frames) throw new Error('unknown liveness job ' + message.job);
  const described = [];
  for (const index of message.indexes) {
    const frame = frames[index];
    if (!frame) { described.push(null); continue; }
    const input = toTensor(frame.rgb);
    let result;
    try {
      result = await human.detect(input, DESCRIBE);
    } finally {
      input.dispose();
    }
    const main = result.face.length ? result.face.reduce((best, face) => (area(face) > area(best) ? face : best)) : null;
    described.push(main && main.embedding && main.embedding.length ? {
      index,
      embedding: Array.from(main.embedding),
      real: typeof main.real === 'number' ? main.real : 0,
      live: typeof main.live === 'number' ? main.live : 0,
    } : null);
  }
  return { described, ms: cpuNow() - started };
}

let queue = Promise.resolve();
parentPort.on('message', (message) => {
  // One job at a time: the WASM backend is single-threaded, interleaving only adds latency.
  queue = queue.then(async () => {
    try {
      if (message.type === 'warmUp') {
        await load();
        const models = human.models.list().filter((model) => model.loaded).map((model) => ({ name: model.name, url: String(model.url) }));
        parentPort.postMessage({ id: message.id, backend: human.tf.getBackend(), models, refusedFetches });
      } else if (message.type === 'pose') {
        parentPort.postMessage({ id: message.id, ...(await pose(message)) });
      } else if (message.type === 'describe') {
        parentPort.postMessage({ id: message.id, ...(await describe(message)) });
      } else if (message.type === 'release') {
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
