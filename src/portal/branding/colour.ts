/**
 * Brand colours and the text drawn on them (WCAG 2.x). The hosted flow's buttons are the brand
 * colour with white or near-black text, whichever contrasts more; a colour on which neither reaches
 * AA for normal text (4.5:1) is refused, so no organization can make the flow unreadable.
 * web/verify/src/frame.ts picks the text colour with the same rule.
 */

/** WCAG AA for normal text. */
export const MIN_CONTRAST = 4.5;
export const LIGHT_TEXT = '#ffffff';
/** The hosted flow's near-black text. */
export const DARK_TEXT = '#111418';

const HEX_COLOUR = /^#[0-9a-f]{6}$/;

/** `#rrggbb` in lower case, from `#RRGGBB` or `#rgb`; undefined for anything else. */
export function normaliseColour(value: string): string | undefined {
  const raw = value.trim().toLowerCase();
  const long = /^#[0-9a-f]{3}$/.test(raw) ? `#${[...raw.slice(1)].map((c) => c + c).join('')}` : raw;
  return HEX_COLOUR.test(long) ? long : undefined;
}

/** The relative luminance of a `#rrggbb` colour. */
export function luminance(colour: string): number {
  const [r, g, b] = [1, 3, 5]
    .map((i) => parseInt(colour.slice(i, i + 2), 16) / 255)
    .map((c) => (c <= 0.03928 ? c / 12.92 : ((c + 0.055) / 1.055) ** 2.4)) as [number, number, number];
  return 0.2126 * r + 0.7152 * g + 0.0722 * b;
}

export function contrast(a: string, b: string): number {
  const [light, dark] = [luminance(a), luminance(b)].sort((x, y) => y - x) as [number, number];
  return (light + 0.05) / (dark + 0.05);
}

/** The text colour for buttons of `colour` and its contrast ratio (rounded to two decimals). */
export function textOn(colour: string): { text: string; contrast: number } {
  const light = contrast(colour, LIGHT_TEXT);
  const dark = contrast(colour, DARK_TEXT);
  const best = light >= dark ? { text: LIGHT_TEXT, ratio: light } : { text: DARK_TEXT, ratio: dark };
  return { text: best.text, contrast: Math.floor(best.ratio * 100) / 100 };
}
