/**
 * The face model's thread, as source text. It runs as an `eval` worker so the same code starts
 * from the compiled `dist/`, from `tsx` and under Vitest (Node 20 cannot start a `.ts` worker file),
 * and it is plain CommonJS because face-api and TensorFlow.js are. It keeps the model's
 * synchronous WASM work off the event loop: the API answers other requests while a face is read.
 *
 * Protocol (typed on the other side in face-engine.ts): in `{ id, pixels, width, height }` (RGB
 * bytes, transferred); out `{ id, faces, face }` with the largest face, or `{ id, error }`.
 */
export const WORKER_SOURCE = String.raw`
'use strict';
const { parentPort, workerData } = require('node:worker_threads');
const faceapi = require(workerData.faceApiPath);
const tf = faceapi.tf;
const settings = workerData.settings;

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
      faceapi.nets.faceRecognitionNet.loadFromDisk(dir),
    ]);
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

async function describe(job) {
  await load();
  const input = tf.tensor3d(job.pixels, [job.height, job.width, 3], 'int32');
  try {
    const detections = await detect(input);
    if (detections.length === 0) return { id: job.id, faces: 0, face: null };
    const largest = detections.reduce((best, candidate) => (area(candidate) > area(best) ? candidate : best));
    const parent = Promise.resolve(faceapi.extendWithFaceDetection({}, largest));
    const result = await new faceapi.DetectSingleFaceLandmarksTask(parent, input, false).withFaceDescriptor();
    if (!result) return { id: job.id, faces: detections.length, face: null };
    const { x, y, width, height } = largest.box;
    return {
      id: job.id,
      faces: detections.length,
      face: { box: { x, y, width, height }, score: largest.score, descriptor: Array.from(result.descriptor) },
    };
  } finally {
    input.dispose();
  }
}

let queue = Promise.resolve();
parentPort.on('message', (job) => {
  // One face at a time: TensorFlow's WASM backend is single-threaded, interleaving only adds latency.
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
