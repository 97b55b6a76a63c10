import { useQuery } from '@tanstack/react-query';
import { api, ApiRequestError, unwrap } from '../api/client';
import type { operations } from '../api/schema';

export type FieldMe = operations['fieldMe']['responses'][200]['content']['application/json'];
export type TaskList = operations['fieldListTasks']['responses'][200]['content']['application/json'];
export type FieldTask = TaskList['data'][number];
export type ReportAnswer = operations['fieldReportTask']['responses'][200]['content']['application/json'];

/**
 * The last answers kept on the phone (localStorage), so the app opens with its tasks where there
 * is no connection: a visit is often where the network is not.
 */
const CACHE_PREFIX = 'vouch.field.';

function remember<T>(name: string, value: T): T {
  try {
    localStorage.setItem(CACHE_PREFIX + name, JSON.stringify({ savedAt: new Date().toISOString(), value }));
  } catch {
    // A full storage only costs the offline copy.
  }
  return value;
}

function recall<T>(name: string): { savedAt: string; value: T } | undefined {
  try {
    const raw = localStorage.getItem(CACHE_PREFIX + name);
    return raw ? (JSON.parse(raw) as { savedAt: string; value: T }) : undefined;
  } catch {
    return undefined;
  }
}

export function forgetFieldCache(): void {
  for (const key of Object.keys(localStorage)) if (key.startsWith(CACHE_PREFIX)) localStorage.removeItem(key);
}

const isOffline = (error: unknown) => error instanceof ApiRequestError && error.status === 0;

/** An answer from the server, or — without a connection — the last one kept, marked with when it was saved. */
async function orKept<T extends object>(name: string, load: () => Promise<T>): Promise<T & { savedAt?: string }> {
  try {
    const value: T & { savedAt?: string } = await load();
    return remember(name, value);
  } catch (error) {
    const kept = isOffline(error) ? recall<T>(name) : undefined;
    if (!kept) throw error;
    return { ...kept.value, savedAt: kept.savedAt };
  }
}

/** The signed-in agent; 401 sends them to sign in (and back), 403 says the app is not theirs. */
export function useFieldMe() {
  return useQuery({ queryKey: ['field', 'me'], queryFn: () => orKept('me', () => unwrap(api.GET('/api/field/me'))), retry: false });
}

export interface Near {
  latitude: number;
  longitude: number;
}

/** The agent's open tasks: nearest first from `near`, else by due date. */
export function useFieldTasks(near: Near | undefined) {
  // Rounded to about 1 km: a phone's position moves a little at every reading.
  const rounded = near && { latitude: Math.round(near.latitude * 100) / 100, longitude: Math.round(near.longitude * 100) / 100 };
  return useQuery({
    queryKey: ['field', 'tasks', rounded ?? null],
    queryFn: () => orKept('tasks', () => unwrap(api.GET('/api/field/tasks', { params: { query: rounded ?? {} } }))),
    placeholderData: (previous) => previous,
  });
}

export const KIND_LABEL: Record<FieldTask['kind'], string> = { address: 'Address', business: 'Business' };

export function taskLabel(task: Pick<FieldTask, 'reference' | 'place' | 'business'>): string {
  return [task.business?.name, task.place.street, task.reference].filter(Boolean).join(' · ');
}

const dueFormat = new Intl.DateTimeFormat('en-GB', { weekday: 'short', day: 'numeric', month: 'short', hour: '2-digit', minute: '2-digit' });

export function formatDue(task: Pick<FieldTask, 'dueAt' | 'overdue'>): string {
  return `${task.overdue ? 'Overdue since' : 'Due'} ${dueFormat.format(new Date(task.dueAt))}`;
}
