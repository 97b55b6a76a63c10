/**
 * The front camera: opened on a tap (iOS needs a user gesture), shown live in a <video>, and read
 * into JPEG frames through a canvas at the size and pace the server asks for.
 */
import type { CapturedFrame } from './api.js';

export type CameraProblem = 'unsupported' | 'insecure' | 'denied' | 'not-found' | 'in-use' | 'failed';

export class CameraError extends Error {
  constructor(readonly problem: CameraProblem) {
    super(problem);
  }
}

/** The largest frame the server takes (frames endpoint limit). */
const MAX_FRAME_BYTES = 300 * 1024;

export function cameraAvailable(): CameraProblem | null {
  if (!window.isSecureContext) return 'insecure';
  if (!navigator.mediaDevices || typeof navigator.mediaDevices.getUserMedia !== 'function') return 'unsupported';
  return null;
}

function problemOf(error: unknown): CameraProblem {
  const name = error instanceof Error || (typeof DOMException !== 'undefined' && error instanceof DOMException) ? (error as Error).name : '';
  switch (name) {
    case 'NotAllowedError':
    case 'PermissionDeniedError':
    case 'SecurityError':
      return 'denied';
    case 'NotFoundError':
    case 'DevicesNotFoundError':
    case 'OverconstrainedError':
      return 'not-found';
    case 'NotReadableError':
    case 'TrackStartError':
    case 'AbortError':
      return 'in-use';
    default:
      return 'failed';
  }
}

export class Camera {
  private constructor(
    readonly stream: MediaStream,
    readonly video: HTMLVideoElement,
  ) {}

  /** Opens the front camera into `video`; throws CameraError saying what went wrong. */
  static async open(video: HTMLVideoElement): Promise<Camera> {
    const unavailable = cameraAvailable();
    if (unavailable) throw new CameraError(unavailable);
    let stream: MediaStream;
    try {
      stream = await navigator.mediaDevices.getUserMedia({
        audio: false,
        video: { facingMode: 'user', width: { ideal: 640 }, height: { ideal: 480 } },
      });
    } catch (error) {
      throw new CameraError(problemOf(error));
    }
    // iOS Safari plays inline only with these set before the stream is attached.
    video.setAttribute('playsinline', '');
    video.setAttribute('autoplay', '');
    video.muted = true;
    video.srcObject = stream;
    try {
      await video.play();
      await waitForFrames(video);
    } catch {
      stream.getTracks().forEach((track) => track.stop());
      throw new CameraError('failed');
    }
    return new Camera(stream, video);
  }

  /** Turns the camera (and its light) off. */
  close(): void {
    this.stream.getTracks().forEach((track) => track.stop());
    this.video.srcObject = null;
  }

  /** One frame as a JPEG no wider than `maxWidth`, under the server's size limit. */
  async grab(canvas: HTMLCanvasElement, maxWidth: number): Promise<Blob> {
    const { videoWidth, videoHeight } = this.video;
    const scale = Math.min(1, maxWidth / videoWidth);
    canvas.width = Math.round(videoWidth * scale);
    canvas.height = Math.round(videoHeight * scale);
    const context = canvas.getContext('2d');
    if (!context) throw new CameraError('failed');
    context.drawImage(this.video, 0, 0, canvas.width, canvas.height);
    for (const quality of [0.85, 0.7, 0.5]) {
      const blob = await toJpeg(canvas, quality);
      if (blob.size <= MAX_FRAME_BYTES) return blob;
    }
    throw new CameraError('failed');
  }
}

function toJpeg(canvas: HTMLCanvasElement, quality: number): Promise<Blob> {
  return new Promise((resolve, reject) => canvas.toBlob((blob) => (blob ? resolve(blob) : reject(new CameraError('failed'))), 'image/jpeg', quality));
}

function waitForFrames(video: HTMLVideoElement): Promise<void> {
  if (video.videoWidth > 0) return Promise.resolve();
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error('no frames')), 10_000);
    video.addEventListener(
      'loadeddata',
      () => {
        clearTimeout(timer);
        resolve();
      },
      { once: true },
    );
  });
}

export interface CapturePlan {
  /** What to show while each segment's frames are taken. */
  segments: { key: string; frames: number }[];
  frameIntervalMs: number;
  maxWidth: number;
}

/**
 * Takes the frames of a plan one segment after another, at the server's interval, calling
 * `onSegment` as each begins and `onFrame` after every frame (for the progress bar).
 */
export async function capture(
  camera: Camera,
  plan: CapturePlan,
  onSegment: (index: number) => void,
  onFrame: (taken: number, total: number) => void,
): Promise<CapturedFrame[]> {
  const canvas = document.createElement('canvas');
  const total = plan.segments.reduce((sum, segment) => sum + segment.frames, 0);
  const frames: CapturedFrame[] = [];
  let start: number | undefined;
  let next = performance.now();
  for (let index = 0; index < plan.segments.length; index++) {
    onSegment(index);
    for (let i = 0; i < plan.segments[index]!.frames; i++) {
      const wait = next - performance.now();
      if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
      const now = performance.now();
      start ??= now;
      frames.push({ atMs: now - start, jpeg: await camera.grab(canvas, plan.maxWidth) });
      next = now + plan.frameIntervalMs;
      onFrame(frames.length, total);
    }
  }
  return frames;
}
