import { loadSharp } from '../platform/sharp.js';
import { sniffImage } from './service.js';

/**
 * Photos from outside (a field agent's visit photos) are never stored as sent: each is decoded and
 * stored as a new JPEG made from its pixels. What a phone writes beside the pixels (EXIF with GPS,
 * capture times, the device's make, model and serial number; XMP; comments; bytes after the end of
 * the image) does not reach the customer, and a file that only starts like an image is refused.
 */

/**
 * The longest side of a stored photo. 2,048 px (3 MP at 4:3) keeps a house number or a signboard
 * readable in a photo of a building, and weighs at most about 1 MB as JPEG where a 12 MP original
 * weighs 3–5 MB. Smaller photos are not enlarged.
 */
export const PHOTO_MAX_SIDE = 2048;

/**
 * The most pixels an upload may declare. A phone camera's full-resolution modes (48, 50, 108 MP)
 * fit; a small file claiming a vast canvas (a decompression bomb) is refused before it is decoded.
 */
export const PHOTO_MAX_INPUT_PIXELS = 120_000_000;

/** JPEG quality of a stored photo, with sharp's usual encoder settings (`mozjpeg` saves 10 % for five times the CPU). */
export const PHOTO_QUALITY = 85;

export interface ReencodedPhoto {
  bytes: Buffer;
  contentType: 'image/jpeg';
  width: number;
  height: number;
}

/** An upload that is not a photo we can store. The message completes "The photo ...". */
export class UnreadablePhoto extends Error {
  override name = 'UnreadablePhoto';
}

/**
 * Decodes a JPEG, PNG or WebP upload and re-encodes it as a JPEG without metadata: turned upright
 * by its EXIF orientation, at most PHOTO_MAX_SIDE on each side, transparency on white, sRGB, the
 * first frame of an animation. Other formats are refused before any decoder sees them (libvips
 * would otherwise open SVG, TIFF, GIF and more by their content).
 *
 * `failOn: 'error'`, not sharp's stricter default: some Samsung phones write JPEGs that libjpeg
 * warns about ("Invalid SOS parameters for sequential JPEG", lovell/sharp#1578) and every viewer
 * shows; refusing those would refuse real visit photos. What is stored is made from the decoded
 * pixels either way.
 */
export async function reencodePhoto(bytes: Buffer): Promise<ReencodedPhoto> {
  if (!sniffImage(bytes)) throw new UnreadablePhoto('is not a JPEG, PNG or WebP image');
  const sharp = await loadSharp();
  try {
    const { data, info } = await sharp(bytes, { limitInputPixels: PHOTO_MAX_INPUT_PIXELS, failOn: 'error' })
      .rotate()
      .resize(PHOTO_MAX_SIDE, PHOTO_MAX_SIDE, { fit: 'inside', withoutEnlargement: true })
      .flatten({ background: '#ffffff' })
      .jpeg({ quality: PHOTO_QUALITY })
      .toBuffer({ resolveWithObject: true });
    return { bytes: data, contentType: 'image/jpeg', width: info.width, height: info.height };
  } catch (error) {
    if (/pixel limit/i.test((error as Error).message)) {
      throw new UnreadablePhoto(`is larger than ${PHOTO_MAX_INPUT_PIXELS / 1_000_000} megapixels; send it at the camera's usual size`);
    }
    throw new UnreadablePhoto('could not be decoded as an image (damaged, or not really a JPEG, PNG or WebP)');
  }
}
