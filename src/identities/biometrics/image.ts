import type { OutputInfo } from 'sharp';
import { loadSharp } from '../../platform/sharp.js';

/** The spec's limit on a biometrics image, for uploads, base64 bodies and fetched URLs alike. */
export const MAX_IMAGE_BYTES = 1024 * 1024;

/** Detection runs on at most this many pixels on the longest side: faces stay findable, time stays low. */
export const DETECTION_MAX_SIDE = 640;

/** Refuses images that decode to more pixels than a camera makes (a small file can claim a huge canvas). */
const MAX_INPUT_PIXELS = 50_000_000;

export type ImageFormat = 'jpeg' | 'png' | 'webp';

/** RGB bytes, three per pixel, row by row; `pixels` owns its buffer so it can be handed to a worker. */
export interface DecodedImage {
  pixels: Uint8Array;
  width: number;
  height: number;
}

/** An image that cannot be used: wrong type, unreadable. The message completes "The supplied photo ...". */
export class ImageError extends Error {
  override name = 'ImageError';
}

/** The format the file's first bytes say it is, whatever name or content type came with it. */
export function sniffImageFormat(bytes: Uint8Array): ImageFormat | undefined {
  const at = (offset: number, ...values: number[]) => values.every((value, i) => bytes[offset + i] === value);
  if (at(0, 0xff, 0xd8, 0xff)) return 'jpeg';
  if (at(0, 0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a)) return 'png';
  if (at(0, 0x52, 0x49, 0x46, 0x46) && at(8, 0x57, 0x45, 0x42, 0x50)) return 'webp';
  return undefined;
}

/**
 * Checks that the bytes are a JPEG, PNG or WebP image and decodes them for detection: EXIF
 * orientation applied, transparency flattened onto white, downscaled to 640 px on the longest side.
 */
export async function decodeForDetection(bytes: Uint8Array): Promise<DecodedImage> {
  if (bytes.length === 0) throw new ImageError('is empty');
  if (!sniffImageFormat(bytes)) throw new ImageError('must be a JPEG, PNG or WebP image');
  const sharp = await loadSharp();
  let output: { data: Buffer; info: OutputInfo };
  try {
    output = await sharp(bytes, { limitInputPixels: MAX_INPUT_PIXELS })
      .rotate()
      .resize(DETECTION_MAX_SIDE, DETECTION_MAX_SIDE, { fit: 'inside', withoutEnlargement: true })
      .flatten({ background: '#ffffff' })
      .toColourspace('srgb')
      .raw()
      .toBuffer({ resolveWithObject: true });
  } catch (error) {
    const detail = /pixel limit/i.test((error as Error).message) ? ` (larger than ${MAX_INPUT_PIXELS / 1e6} megapixels)` : '';
    throw new ImageError(`could not be decoded as an image${detail}`);
  }
  const { data, info } = output;
  if (info.channels !== 3) throw new ImageError('could not be decoded as an RGB image');
  // A copy that owns its memory: the worker takes the buffer over, and sharp's may be shared.
  return { pixels: new Uint8Array(data), width: info.width, height: info.height };
}

/** The bytes of a photo on record as the match reads them: base64, or a base64 data URL. */
export function heldPhotoBytes(photo: string): Buffer {
  return Buffer.from(photo.replace(/^data:[^,]*;base64,/, ''), 'base64');
}
