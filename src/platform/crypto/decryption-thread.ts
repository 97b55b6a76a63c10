import { Worker } from 'node:worker_threads';

/**
 * A thread that opens `vx1:` values (src/platform/crypto/keyring.ts) in bulk, off the event loop.
 *
 * A list page shows about a hundred encrypted values. Opened on the event loop they took half of
 * the request's CPU there and, with the garbage they leave, made the stretches during which that
 * thread answered nobody else: the tail of the lists' latency (docs/benchmarks.md, tenth
 * session). Here they cost the event loop one message each way; the thread does the AES-GCM.
 *
 * The thread only ever answers with the plain text or "not opened" per value: a value it cannot
 * open (a key it was not given, a failed authentication, anything unexpected) is opened again by
 * the caller on its own thread, which raises the keyring's usual errors. So the thread changes
 * where the work runs, never what a read returns or how it fails.
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
  values: string[];
}

interface Reply {
  id: number;
  /** Per value: its plain text, or null when the thread did not open it. */
  plain: (string | null)[];
}

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

parentPort.on('message', (request) => {
  if (request.keys) keys = new Map(request.keys.map((key) => [key.id, { key: Buffer.from(key.key), aad: Buffer.from(key.aad) }]));
  parentPort.postMessage({ id: request.id, plain: request.values.map(open) });
});
`;

export class DecryptionThread {
  private worker: Worker | undefined;
  private pending = new Map<number, { resolve(plain: (string | null)[]): void }>();
  private nextId = 1;
  /** The key version the running thread holds (see `open`). */
  private keysSent = -1;
  private closed = false;

  constructor(private readonly format: { prefix: string; idLength: number }) {}

  /**
   * Opens `values` on the thread with the keys of `version` (`keys()` is called only when the
   * thread holds an older version). Resolves to a plain text or null per value; never rejects:
   * when the thread fails or is closed, every value comes back null (opened by the caller).
   */
  open(values: string[], version: number, keys: () => ThreadKey[]): Promise<(string | null)[]> {
    const worker = this.start();
    if (!worker) return Promise.resolve(values.map(() => null));
    const id = this.nextId++;
    const request: Request = { id, values };
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
    pending.resolve(reply.plain);
  }

  /** The thread is gone: its requests are answered "not opened"; the next call starts another. */
  private fail(worker: Worker | undefined): void {
    if (!worker || this.worker !== worker) return;
    this.worker = undefined;
    for (const pending of this.pending.values()) pending.resolve([]);
    this.pending.clear();
  }
}
