import { Worker } from 'node:worker_threads';

/**
 * A thread that opens `vx1:` values (src/platform/crypto/keyring.ts) in bulk, off the event loop.
 *
 * A list page shows about a hundred encrypted values. Opened on the event loop they took half of
 * the request's CPU there and, with the garbage they leave, made the stretches during which that
 * thread answered nobody else: the tail of the lists' latency (docs/benchmarks.md, tenth
 * session). Here they cost the event loop one message each way; the thread does the AES-GCM.
 *
 * The thread only ever answers with the plain JSON text or "not opened" per value: a value it
 * cannot open (a key it was not given, a failed authentication, a plain text that is not JSON,
 * anything unexpected) is opened again by the caller on its own thread, which raises the keyring's
 * usual errors. So the thread changes where the work runs, never what a read returns or how it fails.
 *
 * The data keys are copied to the thread (the same process, so the same boundary as the keyring
 * itself) when it starts and whenever the keyring loads keys again.
 */

/** One data key as the thread needs it. */
export interface ThreadKey {
  id: string;
  key: Uint8Array;
  aad: Uint8Array;
}

interface Request {
  id: number;
  /** Sent when the thread's keys are older than the keyring's. */
  keys?: ThreadKey[];
  /** The values, one per line (a `vx1:` value has no line break; the caller checks). */
  values: string;
}

/** What the thread answers for a request's values: see `DecryptionThread.open`. */
export interface Opened {
  /** A JSON array with, per value, its plain JSON text, or `null` where it was not opened. */
  json: string;
  /** The positions of the values not opened, in order. */
  failed: number[];
}

type Reply = { id: number } & Opened;

/** Plain CommonJS run as an `eval` worker, so it starts the same from dist/, tsx and Vitest. */
const SOURCE = String.raw`
'use strict';
const { parentPort, workerData } = require('node:worker_threads');
const { createDecipheriv } = require('node:crypto');
const PREFIX = workerData.prefix;
const ID_LENGTH = workerData.idLength;
const IV = 12;
const TAG = 16;
let keys = new Map();

function open(value) {
  if (!value.startsWith(PREFIX) || value.charCodeAt(PREFIX.length + ID_LENGTH) !== 58) return null;
  const key = keys.get(value.slice(PREFIX.length, PREFIX.length + ID_LENGTH));
  if (!key) return null;
  const sealed = Buffer.from(value.slice(PREFIX.length + ID_LENGTH + 1), 'base64url');
  if (sealed.length < IV + TAG) return null;
  try {
    const decipher = createDecipheriv('aes-256-gcm', key.key, sealed.subarray(0, IV));
    decipher.setAAD(key.aad);
    decipher.setAuthTag(sealed.subarray(sealed.length - TAG));
    const data = decipher.update(sealed.subarray(IV, sealed.length - TAG));
    const rest = decipher.final();
    return (rest.length === 0 ? data : Buffer.concat([data, rest])).toString('utf8');
  } catch {
    return null;
  }
}

// Each value's plain text is JSON (the field protection writes JSON): checked here, so that the
// texts joined make an array of exactly one element per value, which the caller parses at once.
function json(text) {
  if (text === null) return null;
  try {
    JSON.parse(text);
    return text;
  } catch {
    return null;
  }
}

parentPort.on('message', (request) => {
  if (request.keys) keys = new Map(request.keys.map((key) => [key.id, { key: Buffer.from(key.key), aad: Buffer.from(key.aad) }]));
  const failed = [];
  const texts = request.values.split('\n').map((value, i) => {
    const text = json(open(value));
    if (text !== null) return text;
    failed.push(i);
    return 'null';
  });
  parentPort.postMessage({ id: request.id, json: '[' + texts.join(',') + ']', failed });
});
`;

export class DecryptionThread {
  private worker: Worker | undefined;
  private pending = new Map<number, { resolve(opened: Opened | null): void }>();
  private nextId = 1;
  /** The key version the running thread holds (see `open`). */
  private keysSent = -1;
  private closed = false;
  /** After the thread failed, values are opened by the caller until then (no new thread per request). */
  private retryAt = 0;

  /** `retryAfterMs`: how long after a failure of the thread the next one may start. */
  constructor(
    private readonly format: { prefix: string; idLength: number },
    private readonly retryAfterMs = 10_000,
  ) {}

  /**
   * Opens `values` (none holding a line break) on the thread with the keys of `version` (`keys()`
   * is called only when the thread holds an older version), each to JSON text. Resolves to their
   * texts as one JSON array, with the positions it did not open (null in the array): one string
   * each way rather than a hundred, and one JSON.parse for the caller. Resolves to null when the
   * thread failed or is closed (the caller opens them all); never rejects.
   */
  open(values: readonly string[], version: number, keys: () => ThreadKey[]): Promise<Opened | null> {
    const worker = this.start();
    if (!worker) return Promise.resolve(null);
    const id = this.nextId++;
    const request: Request = { id, values: values.join('\n') };
    if (this.keysSent !== version) {
      request.keys = keys();
      this.keysSent = version;
    }
    if (this.pending.size === 0) worker.ref();
    return new Promise((resolve) => {
      this.pending.set(id, { resolve });
      worker.postMessage(request);
    });
  }

  close(): void {
    this.closed = true;
    const worker = this.worker;
    this.fail(worker);
    void worker?.terminate();
  }

  private start(): Worker | undefined {
    if (this.closed) return undefined;
    if (this.worker) return this.worker;
    if (Date.now() < this.retryAt) return undefined;
    const worker = new Worker(SOURCE, { eval: true, workerData: this.format });
    // Idle, it does not keep the process alive; while it holds requests it does (see `open`).
    worker.unref();
    worker.on('message', (reply: Reply) => this.settle(reply));
    worker.on('error', () => this.fail(worker));
    worker.on('exit', () => this.fail(worker));
    this.worker = worker;
    this.keysSent = -1;
    return worker;
  }

  private settle(reply: Reply): void {
    const pending = this.pending.get(reply.id);
    if (!pending) return;
    this.pending.delete(reply.id);
    if (this.pending.size === 0) this.worker?.unref();
    pending.resolve({ json: reply.json, failed: reply.failed });
  }

  /** The thread is gone: its requests are answered null (not opened); the next call starts another. */
  private fail(worker: Worker | undefined): void {
    if (!worker || this.worker !== worker) return;
    this.worker = undefined;
    this.retryAt = Date.now() + this.retryAfterMs;
    for (const pending of this.pending.values()) pending.resolve(null);
    this.pending.clear();
  }
}
