import { createHash } from 'node:crypto';
import type { FaceEngine } from '../biometrics/face-engine.js';
import { decodeForDetection, heldPhotoBytes, ImageError } from '../biometrics/image.js';
import { ComputedLru } from '../biometrics/lru.js';
import type { IdentityType } from '../records.js';

/**
 * The import's check of registry photos (docs/registry.md, "Photos"): each photo is read as the
 * face match will read it, decoded as the matcher decodes a held photo and given to the face
 * engine, so a photo in which no face is found, or which is no image, is reported to the operator
 * at import, by line number, instead of failing a person's face match later. The record is stored
 * either way. Nothing from the photo or the record is reported: line numbers and plain words.
 */

/** What finds the largest face in a decoded image: the face engine (a stand-in in tests). */
export type FaceFinder = Pick<FaceEngine, 'describe'>;

export type PhotoProblem = 'no_face' | 'unreadable';

export interface PhotoProblemLine {
  /** 1-based line number of the input. */
  line: number;
  problem: PhotoProblem;
  message: string;
}

export interface PhotoCounts {
  /** Lines whose photo was checked (a photo repeated on several lines counts once per line). */
  checked: number;
  /** Checked lines whose photo decoded but showed no face. */
  noFace: number;
  /** Checked lines whose photo is not a usable image. */
  unreadable: number;
  /** Lines with a photo that was not checked (the import ran without the check). */
  unchecked: number;
}

export interface PhotoReport extends PhotoCounts {
  /** The first MAX_PROBLEMS reported lines, by line number. */
  problems: PhotoProblemLine[];
}

export interface PhotoCheckOptions {
  /** The engine that looks for the face. */
  engine: FaceFinder;
  /** Photos decoded or described at once; the engine has one model thread, sharp a few. */
  concurrency?: number;
  /** Photos waiting for a check before the import stops reading (its backpressure). */
  queueSize?: number;
}

export const MAX_PROBLEMS = 100;
const DEFAULT_CONCURRENCY = 4;
const DEFAULT_QUEUE_SIZE = 32;
// Outcomes of the photos checked last, by a hash of their bytes: a photo repeated in the file (a
// placeholder, one person's photo on their BVN and NIN) is checked once. 32 bytes of hash and an
// outcome a photo: a few megabytes at most.
const REMEMBERED_PHOTOS = 50_000;

const UNTIL_FIXED = 'a face match against this record will fail until it is imported again with a photo that shows a face';

type Outcome = { problem: PhotoProblem; message: string } | null;

interface Waiting {
  line: number;
  photo: string;
}

/**
 * Checks photos in the background of an import, a few at a time, in a queue of bounded length:
 * `add` waits while the queue is full, which holds the import's reading back to the pace of the
 * checks, so the file is never held in memory. An engine failure (not a bad photo: the model
 * would not load or its thread died) is kept and thrown by the next `add` or by `finish`.
 */
export class PhotoChecker {
  readonly counts: PhotoCounts = { checked: 0, noFace: 0, unreadable: 0, unchecked: 0 };
  private readonly problems: PhotoProblemLine[] = [];
  private readonly queue: Waiting[] = [];
  private running = 0;
  private failure: unknown;
  private readonly outcomes = new ComputedLru<string, Outcome>(REMEMBERED_PHOTOS);
  // Resolved whenever a check ends: `add` waiting for room, `finish` waiting for the end.
  private wakeUp: (() => void) | undefined;
  private readonly engine: FaceFinder;
  private readonly concurrency: number;
  private readonly queueSize: number;

  constructor(options: PhotoCheckOptions) {
    this.engine = options.engine;
    this.concurrency = options.concurrency ?? DEFAULT_CONCURRENCY;
    this.queueSize = options.queueSize ?? DEFAULT_QUEUE_SIZE;
  }

  /** Photos read but not yet checked. */
  get waiting(): number {
    return this.queue.length + this.running;
  }

  /** Queues the photo of line `line`; resolves once the queue has room for the next one. */
  async add(line: number, photo: string): Promise<void> {
    this.throwIfFailed();
    this.queue.push({ line, photo });
    this.pump();
    while (this.queue.length >= this.queueSize && this.failure === undefined) await this.nextWakeUp();
    this.throwIfFailed();
  }

  /** Waits until every queued photo is checked; throws an engine failure. */
  async finish(): Promise<void> {
    while (this.waiting > 0 && this.failure === undefined) await this.nextWakeUp();
    this.throwIfFailed();
  }

  /** Drops what has not started and waits for the running checks, whatever their outcome. */
  async settle(): Promise<void> {
    this.queue.length = 0;
    while (this.running > 0) await this.nextWakeUp();
  }

  report(): PhotoReport {
    return { ...this.counts, problems: [...this.problems] };
  }

  private throwIfFailed(): void {
    if (this.failure === undefined) return;
    const reason = this.failure instanceof Error ? this.failure.message : String(this.failure);
    throw new Error(`the photo check failed (${reason}); the batches stored before it are kept: import again, or with --no-check-photos`);
  }

  private nextWakeUp(): Promise<void> {
    return new Promise((resolve) => {
      const before = this.wakeUp;
      this.wakeUp = () => {
        before?.();
        resolve();
      };
    });
  }

  private wake(): void {
    const wakeUp = this.wakeUp;
    this.wakeUp = undefined;
    wakeUp?.();
  }

  private pump(): void {
    while (this.running < this.concurrency && this.queue.length > 0 && this.failure === undefined) {
      const next = this.queue.shift()!;
      this.running += 1;
      this.outcomeOf(next.photo)
        .then(
          (outcome) => this.record(next.line, outcome),
          (error: unknown) => {
            this.failure ??= error;
          },
        )
        .finally(() => {
          this.running -= 1;
          this.pump();
          this.wake();
        });
    }
  }

  private record(line: number, outcome: Outcome): void {
    this.counts.checked += 1;
    if (outcome === null) return;
    if (outcome.problem === 'no_face') this.counts.noFace += 1;
    else this.counts.unreadable += 1;
    // Checks end out of order: keep the lowest line numbers, not the first to finish.
    if (this.problems.length === MAX_PROBLEMS && line > this.problems[MAX_PROBLEMS - 1]!.line) return;
    this.problems.push({ line, ...outcome });
    this.problems.sort((a, b) => a.line - b.line);
    if (this.problems.length > MAX_PROBLEMS) this.problems.pop();
  }

  /** The photo's outcome, computed once for the same bytes however many lines carry them. */
  private outcomeOf(photo: string): Promise<Outcome> {
    // As the matcher reads a held photo.
    const bytes = heldPhotoBytes(photo);
    const key = createHash('sha256').update(bytes).digest('base64url');
    return this.outcomes.get(key, () => this.check(bytes));
  }

  private async check(bytes: Buffer): Promise<Outcome> {
    let image;
    try {
      image = await decodeForDetection(bytes);
    } catch (error) {
      // ImageError's message completes "The photo ..." and quotes nothing from the bytes.
      if (error instanceof ImageError) return { problem: 'unreadable', message: `the photo ${error.message}; ${UNTIL_FIXED}` };
      throw error;
    }
    const face = await this.engine.describe(image);
    return face ? null : { problem: 'no_face', message: `no face was found in the photo; ${UNTIL_FIXED}` };
  }
}

/** The photo the face match would read from an accepted record, if it has one (vNIN's is a URL, not fetched). */
export function checkablePhoto(type: IdentityType, record: Record<string, unknown>): string | undefined {
  if (type !== 'bvn' && type !== 'nin' && type !== 'drivers_license') return undefined;
  const photo = record.photo;
  // The match takes an empty photo for none (biometrics/routes.ts), so the check does too.
  return typeof photo === 'string' && photo !== '' ? photo : undefined;
}
