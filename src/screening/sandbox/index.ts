import { ScreeningIndex } from '../matching/index.js';
import type { ListSnapshot } from '../service.js';
import { SANDBOX_ENTITIES, SANDBOX_SOURCE, SANDBOX_VERSION } from './list.js';

let built: ListSnapshot | undefined;

/** The sandbox list's index, built on first use and shared: it never changes. */
export function sandboxLists(): ListSnapshot {
  built ??= { index: new ScreeningIndex(SANDBOX_ENTITIES), lists: [{ source: SANDBOX_SOURCE, version: SANDBOX_VERSION }] };
  return built;
}
