import type { UpstreamKind } from './adapter.js';
import { dojah } from './dojah/kind.js';
import { verifyme } from './verifyme/kind.js';
import { youverify } from './youverify/kind.js';

/**
 * Every provider `vouch upstream add --kind` accepts. Adding one is an import and an entry:
 * the CLI, the router and the docs read the list from here.
 */
export const UPSTREAM_KINDS: readonly UpstreamKind[] = [verifyme, dojah, youverify];

export function upstreamKind(name: string): UpstreamKind | undefined {
  return UPSTREAM_KINDS.find((kind) => kind.kind === name);
}
