/**
 * The text colour the hosted flow draws on a brand colour, and its contrast: the same rule as the
 * server (src/portal/branding/colour.ts) and the flow (web/verify/src/frame.ts), so the preview
 * says before saving what the server will accept.
 */

export const MIN_CONTRAST = 4.5;
const DARK_TEXT = '#111418';

function luminance(colour: string): number {
  const [r, g, b] = [1, 3, 5]
    .map((i) => parseInt(colour.slice(i, i + 2), 16) / 255)
    .map((c) => (c <= 0.03928 ? c / 12.92 : ((c + 0.055) / 1.055) ** 2.4)) as [number, number, number];
  return 0.2126 * r + 0.7152 * g + 0.0722 * b;
}

/** `#rrggbb` (lower case) from `#rrggbb` or `#rgb`; null for anything else. */
export function hexColour(value: string): string | null {
  const raw = value.trim().toLowerCase();
  const long = /^#[0-9a-f]{3}$/.test(raw) ? `#${[...raw.slice(1)].map((c) => c + c).join('')}` : raw;
  return /^#[0-9a-f]{6}$/.test(long) ? long : null;
}

export function textOn(colour: string): { text: string; contrast: number } {
  const brand = luminance(colour);
  const light = 1.05 / (brand + 0.05);
  const dark = (brand + 0.05) / (luminance(DARK_TEXT) + 0.05);
  const best = light >= dark ? { text: '#ffffff', ratio: light } : { text: DARK_TEXT, ratio: dark };
  return { text: best.text, contrast: Math.floor(best.ratio * 100) / 100 };
}
