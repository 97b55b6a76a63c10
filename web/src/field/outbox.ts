import { openDB, type DBSchema, type IDBPDatabase } from 'idb';
import { useSyncExternalStore } from 'react';

/**
 * The phone's outbox of visit reports (IndexedDB). Every report is written here first, with its
 * photos as Blobs and an Idempotency-Key made on the phone, then sent; it leaves the outbox once
 * the server has accepted it. A report that could not be sent (no connection, the server away)
 * stays "queued" and is sent again when the browser is back online, when the app starts, every
 * minute while something waits, or when the agent taps Retry — always under its one key, so the
 * server files it once however many times it arrives. A report the server refuses (4xx) stays,
 * "refused", with the server's reason, until the agent discards it.
 */

export interface ReportFields {
  [name: string]: string;
}

export interface OutboxEntry {
  /** The Idempotency-Key: one per report, made when the report was submitted. */
  key: string;
  kind: 'address' | 'business';
  id: number;
  /** How the agent recognises the task: its reference and street. */
  label: string;
  fields: ReportFields;
  photos: Blob[];
  createdAt: string;
  status: 'queued' | 'refused';
  /** Why the last try did not land (refused: the server's reason; queued: what to wait for). */
  note?: string;
  attempts: number;
  lastTriedAt?: string;
}

/** What sending one report came to. */
export type SendResult =
  | { kind: 'sent'; answer: unknown }
  | { kind: 'offline' }
  | { kind: 'refused'; status: number; code: string; message: string }
  | { kind: 'later'; message: string };

interface OutboxDb extends DBSchema {
  reports: { key: string; value: OutboxEntry };
}

const DB_NAME = 'vouch-field';

let opening: Promise<IDBPDatabase<OutboxDb>> | undefined;
function database(): Promise<IDBPDatabase<OutboxDb>> {
  opening ??= openDB<OutboxDb>(DB_NAME, 1, {
    upgrade(db) {
      db.createObjectStore('reports', { keyPath: 'key' });
    },
  });
  return opening;
}

/** A new Idempotency-Key (crypto.randomUUID needs a secure context; getRandomValues does not). */
export function newReportKey(): string {
  if (typeof crypto.randomUUID === 'function') return crypto.randomUUID();
  const bytes = crypto.getRandomValues(new Uint8Array(16));
  return Array.from(bytes, (byte) => byte.toString(16).padStart(2, '0')).join('');
}

// A small store the pages subscribe to: the entries as last read, refreshed after every change.
let snapshot: OutboxEntry[] = [];
const listeners = new Set<() => void>();
const sentListeners = new Set<(entry: OutboxEntry, answer: unknown) => void>();

async function refresh(): Promise<void> {
  const all = await (await database()).getAll('reports');
  snapshot = all.sort((a, b) => a.createdAt.localeCompare(b.createdAt));
  for (const listener of listeners) listener();
}

function subscribe(listener: () => void): () => void {
  listeners.add(listener);
  return () => listeners.delete(listener);
}

/** The outbox's entries, oldest first; re-renders on every change. */
export function useOutbox(): OutboxEntry[] {
  return useSyncExternalStore(subscribe, () => snapshot);
}

/** Calls back each time a report was accepted by the server (to refresh the task list). */
export function onReportSent(listener: (entry: OutboxEntry, answer: unknown) => void): () => void {
  sentListeners.add(listener);
  return () => sentListeners.delete(listener);
}

export async function loadOutbox(): Promise<void> {
  await refresh();
}

export async function addToOutbox(entry: Omit<OutboxEntry, 'status' | 'attempts' | 'createdAt'>): Promise<OutboxEntry> {
  const full: OutboxEntry = { ...entry, status: 'queued', attempts: 0, createdAt: new Date().toISOString() };
  await (await database()).put('reports', full);
  await refresh();
  return full;
}

export async function discard(key: string): Promise<void> {
  await (await database()).delete('reports', key);
  await refresh();
}

/** Posts one report as multipart with its Idempotency-Key; never throws. */
export async function postReport(entry: OutboxEntry): Promise<SendResult> {
  const form = new FormData();
  for (const [name, value] of Object.entries(entry.fields)) form.set(name, value);
  entry.photos.forEach((photo, index) => form.append('photos', photo, `photo-${index + 1}.jpg`));
  let response: Response;
  try {
    response = await fetch(`/api/field/tasks/${entry.kind}/${entry.id}/report`, {
      method: 'POST',
      body: form,
      headers: { 'Idempotency-Key': entry.key },
      credentials: 'same-origin',
    });
  } catch {
    return { kind: 'offline' };
  }
  const body = (await response.json().catch(() => ({}))) as { code?: string; message?: string };
  if (response.ok) return { kind: 'sent', answer: body };
  const message = typeof body.message === 'string' ? body.message : `The server answered HTTP ${response.status}`;
  if (response.status === 401) return { kind: 'later', message: 'Your session has ended: sign in again and the report will be sent' };
  if (response.status === 408 || response.status === 429 || response.status >= 500) return { kind: 'later', message: `Not sent yet: ${message}` };
  return { kind: 'refused', status: response.status, code: body.code ?? 'ERROR', message };
}

const results = new Map<string, SendResult>();
let flushing: Promise<void> | undefined;

/**
 * Sends every queued report, oldest first, one at a time; stops at the first that cannot reach
 * the server (the rest would not either). One flush at a time in this tab, and across tabs when
 * the browser has Web Locks; the Idempotency-Key makes even a double send file once.
 */
export function flushOutbox(): Promise<void> {
  flushing ??= (async () => {
    try {
      const run = () => sendQueued();
      if (navigator.locks) await navigator.locks.request('vouch-field-outbox', run);
      else await run();
    } finally {
      flushing = undefined;
    }
  })();
  return flushing;
}

async function sendQueued(): Promise<void> {
  const db = await database();
  const queued = (await db.getAll('reports')).filter((entry) => entry.status === 'queued').sort((a, b) => a.createdAt.localeCompare(b.createdAt));
  for (const entry of queued) {
    const result = await postReport(entry);
    results.set(entry.key, result);
    const tried = { ...entry, attempts: entry.attempts + 1, lastTriedAt: new Date().toISOString() };
    if (result.kind === 'sent') {
      await db.delete('reports', entry.key);
      await refresh();
      for (const listener of sentListeners) listener(entry, result.answer);
      continue;
    }
    if (result.kind === 'refused') {
      await db.put('reports', { ...tried, status: 'refused', note: result.message });
      await refresh();
      continue;
    }
    await db.put('reports', { ...tried, note: result.kind === 'offline' ? undefined : result.message });
    await refresh();
    return;
  }
}

/** Reports whose form is waiting for their answer (it tells the agent itself). */
export const sentFromForm = new Set<string>();

/** Sends the queue now, and tells what became of one report of it (undefined: still waiting). */
export async function sendNow(key: string): Promise<SendResult | undefined> {
  results.delete(key);
  sentFromForm.add(key);
  try {
    return await sendAndRead(key);
  } finally {
    sentFromForm.delete(key);
  }
}

async function sendAndRead(key: string): Promise<SendResult | undefined> {
  await flushOutbox();
  // A flush already under way when this report was added may have ended before reaching it.
  if (!results.has(key) && snapshot.some((entry) => entry.key === key && entry.status === 'queued')) await flushOutbox();
  return results.get(key);
}

let started = false;

/** Loads the outbox and sends it at start, whenever the browser comes online, and every minute while reports wait. */
export function startOutbox(): void {
  if (started) return;
  started = true;
  void loadOutbox().then(() => flushOutbox());
  window.addEventListener('online', () => void flushOutbox());
  window.setInterval(() => {
    if (snapshot.some((entry) => entry.status === 'queued')) void flushOutbox();
  }, 60_000);
}
