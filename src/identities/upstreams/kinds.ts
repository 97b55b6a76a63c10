import type { FaceMatchType, UpstreamKind } from './adapter.js';
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

/**
 * The identities a source can compare selfies with: its kind's face matches, within the types the
 * operator let it serve (`--types`). Empty for an unknown kind or one without a face match.
 */
export function faceMatchTypesOf(kind: string, types: readonly string[]): readonly FaceMatchType[] {
  return upstreamKind(kind)?.faceMatchTypes?.filter((type) => types.includes(type)) ?? [];
}
