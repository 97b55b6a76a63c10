import sharp from 'sharp';
import { expect } from 'vitest';

/** Visit photos as phones and forgers send them, and what a stored photo must look like. */

/** Strings the phone's EXIF carries: its maker, its serial number, a GPS field, the capture time. */
export const EXIF_MARKERS = ['VouchPhoneCo', 'SN-VOUCH-4242', 'VOUCH-GPS-DATUM', '2030:01:02 03:04:05'];

/**
 * A real JPEG, 40 × 20 pixels as encoded (red left half, blue right half), with an EXIF block a
 * phone would write: make, model, serial number, capture time, GPS position, and orientation 6
 * (shown turned 90° clockwise: 20 wide and 40 tall, red on top).
 */
export async function phonePhoto(): Promise<Buffer> {
  const [width, height] = [40, 20];
  const pixels = Buffer.alloc(width * height * 3);
  for (let y = 0; y < height; y++) {
    for (let x = 0; x < width; x++) pixels.set(x < width / 2 ? [220, 20, 20] : [20, 20, 220], (y * width + x) * 3);
  }
  const bytes = await sharp(pixels, { raw: { width, height, channels: 3 } })
    .withExif({
      IFD0: { Make: 'VouchPhoneCo', Model: 'Vouch X1' },
      IFD2: { BodySerialNumber: 'SN-VOUCH-4242', DateTimeOriginal: '2030:01:02 03:04:05' },
      IFD3: { GPSMapDatum: 'VOUCH-GPS-DATUM', GPSLatitudeRef: 'N', GPSLatitude: '6/1 26/1 5064/100', GPSLongitudeRef: 'E', GPSLongitude: '3/1 28/1 2028/100' },
    })
    .withMetadata({ orientation: 6 })
    .jpeg({ quality: 95 })
    .toBuffer();
  // The fixture is what it says: the markers and the orientation are in the upload.
  for (const marker of EXIF_MARKERS) expect(bytes.includes(marker), marker).toBe(true);
  expect((await sharp(bytes).metadata()).orientation).toBe(6);
  return bytes;
}

/** Not an image: JPEG's first bytes, an APP1/Exif block with a phone's details, junk, JPEG's end marker. */
export function fakeJpeg(): Buffer {
  const exif = Buffer.concat([Buffer.from('Exif\0\0'), Buffer.from('VouchPhoneCo SN-VOUCH-4242')]);
  const app1 = Buffer.concat([Buffer.from([0xff, 0xe1, (exif.length + 2) >> 8, (exif.length + 2) & 0xff]), exif]);
  return Buffer.concat([Buffer.from([0xff, 0xd8]), app1, Buffer.from('junk, not pixels'.repeat(20)), Buffer.from([0xff, 0xd9])]);
}

/** A real baseline JPEG whose frame header (SOF0) now claims width × height: a decompression bomb's header. */
export function claimingSize(jpeg: Buffer, width: number, height: number): Buffer {
  const bomb = Buffer.from(jpeg);
  const sof = bomb.indexOf(Buffer.from([0xff, 0xc0]));
  expect(sof).toBeGreaterThan(0);
  // Marker (2), length (2), precision (1), then height and width, big-endian.
  bomb.writeUInt16BE(height, sof + 5);
  bomb.writeUInt16BE(width, sof + 7);
  return bomb;
}

/** A stored photo: a JPEG of that size with no EXIF, XMP, ICC or orientation, and none of the phone's strings. */
export async function expectStoredPhoto(bytes: Buffer, size: { width: number; height: number }): Promise<void> {
  const meta = await sharp(bytes).metadata();
  expect(meta).toMatchObject({ format: 'jpeg', width: size.width, height: size.height });
  expect(meta.exif).toBeUndefined();
  expect(meta.xmp).toBeUndefined();
  expect(meta.icc).toBeUndefined();
  expect(meta.orientation).toBeUndefined();
  for (const marker of EXIF_MARKERS) expect(bytes.includes(marker), marker).toBe(false);
}

/** The colour of one pixel, as [r, g, b]. */
export async function pixelAt(bytes: Buffer, x: number, y: number): Promise<number[]> {
  const { data, info } = await sharp(bytes).raw().toBuffer({ resolveWithObject: true });
  const at = (y * info.width + x) * info.channels;
  return [data[at]!, data[at + 1]!, data[at + 2]!];
}
