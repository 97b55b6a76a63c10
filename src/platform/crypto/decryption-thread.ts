import { Worker } from 'node:worker_threads';
import { WorkerCalls } from '../worker-calls.js';

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
const { createDecipheriv, createSecretKey } = require('node:crypto');
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
  if (request.keys) keys = new Map(request.keys.map((key) => [key.id, { key: createSecretKey(Buffer.from(key.key)), aad: Buffer.from(key.aad) }]));
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
  private calls: WorkerCalls<Reply> | undefined;
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
    const calls = this.start();
    if (!calls) return Promise.resolve(null);
    const request: Request = { values: values.join('\n') };
    if (this.keysSent !== version) {
      request.keys = keys();
      this.keysSent = version;
    }
    return calls.send(request).then(
      (reply) => ({ json: reply.json, failed: reply.failed }),
      () => null,
    );
  }

  close(): void {
    this.closed = true;
    void this.calls?.close(new Error('decryption thread closed'));
  }

  private start(): WorkerCalls<Reply> | undefined {
    if (this.closed) return undefined;
    if (this.calls) return this.calls;
    if (Date.now() < this.retryAt) return undefined;
    // Idle, it does not keep the process alive; while it holds requests it does (WorkerCalls).
    this.calls = new WorkerCalls<Reply>(new Worker(SOURCE, { eval: true, workerData: this.format }), 'decryption thread', (gone) => {
      // The thread is gone: its requests are answered null (not opened); a new one starts after a while.
      if (this.calls !== gone) return;
      this.calls = undefined;
      this.retryAt = Date.now() + this.retryAfterMs;
    });
    this.keysSent = -1;
    return this.calls;
  }
}
