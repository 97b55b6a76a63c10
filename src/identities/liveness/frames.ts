import { loadSharp } from '../../platform/sharp.js';
import { sniffImageFormat } from '../biometrics/image.js';
import type { RgbFrame } from './analyzer.js';

/** A camera frame is at most this many pixels; a small file claiming a huge canvas is refused. */
const MAX_FRAME_PIXELS = 12_000_000;

/**
 * A frame's perceptual print: the signs of horizontal brightness steps in a grey thumbnail.
 * `coarse` (9×8, 64 bits) is the same for a re-encoded, rescaled or brightened copy (0–3 bits
 * apart) and finds candidates through an index; `fine` (65×48, 3072 bits) decides: a copy stays
 * closer than another moment of the same person in the same place, who never holds the same
 * pixels twice (docs/liveness.md has the measured distances). Neither can be turned back into a
 * picture of the person.
 */
export interface FramePrint {
  coarse: bigint;
  fine: Buffer;
}

/** Pose and eyes are read on a smaller copy: the face models' inputs are 256 px or less anyway. */
export const POSE_WIDTH = 320;

export interface DecodedFrame {
  /** At most the capture's width: identity and anti-spoofing are read on it. */
  rgb: RgbFrame;
  /** At most POSE_WIDTH wide: faces, poses and eyes are read on it (~20 % less CPU). */
  small: RgbFrame;
  print: FramePrint;
}

/**
 * Decodes one frame for the models: EXIF orientation applied, at most `maxWidth` wide, RGB.
 * Undefined when the bytes are not an image that decodes.
 */
export async function decodeFrame(bytes: Buffer, maxWidth: number): Promise<DecodedFrame | undefined> {
  if (bytes.length === 0 || !sniffImageFormat(bytes)) return undefined;
  const sharp = await loadSharp();
  try {
    const { data, info } = await sharp(bytes, { limitInputPixels: MAX_FRAME_PIXELS })
      .rotate()
      .resize(maxWidth, maxWidth, { fit: 'inside', withoutEnlargement: true })
      .flatten({ background: '#000000' })
      .toColourspace('srgb')
      .raw()
      .toBuffer({ resolveWithObject: true });
    if (info.channels !== 3) return undefined;
    const rgb: RgbFrame = { pixels: new Uint8Array(data), width: info.width, height: info.height };
    return { rgb, small: await shrink(rgb, POSE_WIDTH), print: await printOf(rgb) };
  } catch {
    return undefined;
  }
}

async function shrink(rgb: RgbFrame, width: number): Promise<RgbFrame> {
  if (rgb.width <= width) return { pixels: new Uint8Array(rgb.pixels), width: rgb.width, height: rgb.height };
  const sharp = await loadSharp();
  const { data, info } = await sharp(rgb.pixels, { raw: { width: rgb.width, height: rgb.height, channels: 3 } })
    .resize(width)
    .raw()
    .toBuffer({ resolveWithObject: true });
  return { pixels: new Uint8Array(data), width: info.width, height: info.height };
}

/** The print of decoded RGB pixels (see FramePrint). */
export async function printOf(rgb: RgbFrame): Promise<FramePrint> {
  const raw = { raw: { width: rgb.width, height: rgb.height, channels: 3 as const } };
  const sharp = await loadSharp();
  const grey = (width: number, height: number) => sharp(rgb.pixels, raw).greyscale().resize(width, height, { fit: 'fill', kernel: 'cubic' }).raw().toBuffer();
  const [small, large] = await Promise.all([grey(9, 8), grey(65, 48)]);
  return { coarse: differenceBits(small, 9, 8).readBigUInt64BE(0), fine: differenceBits(large, 65, 48) };
}

/** One bit per horizontally neighbouring pair: is the right pixel brighter than the left? */
function differenceBits(grey: Buffer, width: number, height: number): Buffer {
  const bits = Buffer.alloc(((width - 1) * height) / 8);
  let bit = 0;
  for (let y = 0; y < height; y++) {
    for (let x = 0; x < width - 1; x++, bit++) {
      if (grey[y * width + x + 1]! > grey[y * width + x]!) bits[bit >> 3]! |= 0x80 >> (bit & 7);
    }
  }
  return bits;
}

/** How many bits two prints of the same length differ in. */
export function hammingDistance(a: Buffer, b: Buffer): number {
  let count = 0;
  for (let i = 0; i < a.length; i++) {
    let x = a[i]! ^ (b[i] ?? 0);
    while (x) {
      x &= x - 1;
      count++;
    }
  }
  return count;
}

/** The four 16-bit bands of a coarse print: two prints within 3 bits of each other share one. */
export function printBands(coarse: bigint): [number, number, number, number] {
  const band = (shift: bigint) => Number((coarse >> shift) & 0xffffn);
  return [band(48n), band(32n), band(16n), band(0n)];
}
