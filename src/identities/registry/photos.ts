import { createHash } from 'node:crypto';
import { loadSharp } from '../../platform/sharp.js';

/**
 * Placeholder portraits that stand in for registry photos in the demo registry and the sandbox's
 * vNIN (the BVN, NIN and drivers license test identities wear real faces: biometrics/samples.ts).
 * A placeholder is a head-and-shoulders silhouette whose colours and proportions follow from a
 * hash of the seed, so one seed always gives the same JPEG bytes (on one machine: the initials go
 * through the installed fonts) and two records rarely look alike.
 */

const WIDTH = 160;
const HEIGHT = 200;

export async function portraitJpegBase64(seed: string, initials: string): Promise<string> {
  const sharp = await loadSharp();
  const jpeg = await sharp(Buffer.from(portraitSvg(seed, initials))).jpeg({ quality: 70 }).toBuffer();
  return jpeg.toString('base64');
}

/** The same portrait as a data URL, for records whose photo field is a URL (vNIN). */
export async function portraitDataUrl(seed: string, initials: string): Promise<string> {
  return `data:image/jpeg;base64,${await portraitJpegBase64(seed, initials)}`;
}

function portraitSvg(seed: string, initials: string): string {
  const h = createHash('sha256').update(seed).digest();
  const byte = (i: number) => h[i] ?? 0;
  const hue = ((byte(0) << 8) | byte(1)) % 360;
  const background = hslToHex(hue, 25 + (byte(2) % 25), 80 + (byte(3) % 10));
  const figure = hslToHex(12 + (byte(4) % 26), 25 + (byte(5) % 30), 18 + (byte(6) % 26));
  const headRadius = 30 + (byte(7) % 9);
  const headY = 74 + (byte(8) % 10);
  const shoulderTop = headY + headRadius + 8 + (byte(9) % 8);
  const shoulderHalf = 58 + (byte(10) % 16);
  const left = WIDTH / 2 - shoulderHalf;
  const right = WIDTH / 2 + shoulderHalf;
  const label = escapeXml(initials.trim().slice(0, 3).toUpperCase());
  return [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${WIDTH}" height="${HEIGHT}" viewBox="0 0 ${WIDTH} ${HEIGHT}">`,
    `<rect width="${WIDTH}" height="${HEIGHT}" fill="${background}"/>`,
    `<path d="M${left} ${HEIGHT} C${left} ${shoulderTop - 4} ${right} ${shoulderTop - 4} ${right} ${HEIGHT} Z" fill="${figure}"/>`,
    `<rect x="${WIDTH / 2 - 12}" y="${headY + headRadius - 6}" width="24" height="${shoulderTop - headY - headRadius + 10}" fill="${figure}"/>`,
    `<circle cx="${WIDTH / 2}" cy="${headY}" r="${headRadius}" fill="${figure}"/>`,
    `<text x="${WIDTH - 10}" y="24" text-anchor="end" font-family="DejaVu Sans, sans-serif" font-size="16" font-weight="bold" fill="${figure}">${label}</text>`,
    '</svg>',
  ].join('');
}

function hslToHex(hue: number, saturation: number, lightness: number): string {
  const s = saturation / 100;
  const l = lightness / 100;
  const a = s * Math.min(l, 1 - l);
  const channel = (n: number) => {
    const k = (n + hue / 30) % 12;
    const value = l - a * Math.max(-1, Math.min(k - 3, 9 - k, 1));
    return Math.round(value * 255)
      .toString(16)
      .padStart(2, '0');
  };
  return `#${channel(0)}${channel(8)}${channel(4)}`;
}

function escapeXml(text: string): string {
  return text.replace(/[<>&"']/g, (c) => `&#${c.charCodeAt(0)};`);
}
