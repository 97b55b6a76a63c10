/**
 * Draws the field app's install icons (web/public/field-icon-*.png) from one SVG with sharp,
 * offline. The PNGs are committed; run again only to change the icon:
 *
 *   node scripts/field-icons.mjs
 *
 * "any" icons fill the square with rounded corners; the maskable one keeps the mark inside the
 * safe zone (the middle 80%) on a full-bleed background, as Android crops it to a circle or squircle.
 */
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import sharp from 'sharp';

const OUT = path.join(path.dirname(fileURLToPath(import.meta.url)), '..', 'web', 'public');
const TEAL = '#0c8599';

/** The Vouch "V" under a map pin, drawn in a 64-unit box scaled by `scale` about the centre. */
function svg({ rounded, scale }) {
  const corner = rounded ? 14 : 0;
  return `<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 64 64">
  <rect width="64" height="64" rx="${corner}" fill="${TEAL}"/>
  <g transform="translate(32 32) scale(${scale}) translate(-32 -32)">
    <path d="M32 7c-6.1 0-11 4.9-11 11 0 8 11 18 11 18s11-10 11-18c0-6.1-4.9-11-11-11z" fill="#fff"/>
    <circle cx="32" cy="18" r="4.2" fill="${TEAL}"/>
    <path d="M17 38l15 19 15-19" fill="none" stroke="#fff" stroke-width="6" stroke-linecap="round" stroke-linejoin="round"/>
  </g>
</svg>`;
}

const icons = [
  { file: 'field-icon-192.png', size: 192, rounded: true, scale: 1 },
  { file: 'field-icon-512.png', size: 512, rounded: true, scale: 1 },
  { file: 'field-icon-maskable-512.png', size: 512, rounded: false, scale: 0.78 },
];

for (const icon of icons) {
  await sharp(Buffer.from(svg(icon)), { density: (72 * icon.size) / 64 })
    .resize(icon.size, icon.size)
    .png({ compressionLevel: 9, palette: true })
    .toFile(path.join(OUT, icon.file));
  process.stdout.write(`wrote web/public/${icon.file}\n`);
}
