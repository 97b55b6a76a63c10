/**
 * The default score a hit must reach (0–1). See index.ts for how it was chosen.
 */
export const DEFAULT_THRESHOLD = 0.8;
