import type sharpModule from 'sharp';

export type SharpFactory = typeof sharpModule;

let loading: Promise<SharpFactory> | undefined;

/**
 * sharp, loaded on first use. Loading it loads libvips (a native library) and checks its version:
 * 0.1-0.2 s of every `vouch` command's start on a slow machine, for the few that touch an image
 * (docs/benchmarks.md, twenty-fourth session). Every module that uses it asks for it here;
 * `vouch serve` loads it at its start.
 */
export function loadSharp(): Promise<SharpFactory> {
  loading ??= import('sharp').then((loaded) => loaded.default);
  return loading;
}
