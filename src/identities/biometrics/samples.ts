import { createRequire } from 'node:module';
import type { Region } from 'sharp';
import { loadSharp } from '../../platform/sharp.js';

/**
 * The face-api package ships six group photos (demo/sample1–6.jpg, 1920 px wide, 22 people, no
 * one in two photos). They are the only real faces Vouch can reach without a download: the
 * sandbox's test identities wear three of them, and the tests and the accuracy measurement build
 * their selfies from them. Nothing here copies an image into the repository.
 */

export type SampleNumber = 1 | 2 | 3 | 4 | 5 | 6;

export interface Box {
  x: number;
  y: number;
  width: number;
  height: number;
}

/** A face in a sample photo, by the box SSD MobileNet draws around it in the full-size image. */
export interface SampleFace {
  sample: SampleNumber;
  box: Box;
}

const require = createRequire(import.meta.url);

/** The file of a demo photo inside node_modules. */
export function samplePath(sample: SampleNumber): string {
  return require.resolve(`@vladmandic/face-api/demo/sample${sample}.jpg`);
}

/**
 * A head-and-shoulders crop around the face, `widthFaces` face widths wide, 5:4 tall, with the face
 * a little above the middle; clipped to the photo. `shiftX` moves it sideways by face widths.
 */
export async function faceCrop(face: SampleFace, widthFaces: number, shiftX = 0): Promise<Region> {
  const sharp = await loadSharp();
  const { width: imageWidth = 0, height: imageHeight = 0 } = await sharp(samplePath(face.sample)).metadata();
  const { box } = face;
  const width = Math.min(imageWidth, Math.round(box.width * widthFaces));
  const height = Math.min(imageHeight, Math.round(width * 1.25));
  const centreX = box.x + box.width / 2 + shiftX * box.width;
  const centreY = box.y + box.height * 0.6;
  const clamp = (value: number, max: number) => Math.max(0, Math.min(max, Math.round(value)));
  return {
    left: clamp(centreX - width / 2, imageWidth - width),
    top: clamp(centreY - height * 0.45, imageHeight - height),
    width,
    height,
  };
}

/** A 160×200 JPEG of the face, as registries hold ID photos: base64, no data-URL prefix. */
export async function samplePortraitBase64(face: SampleFace): Promise<string> {
  const region = await faceCrop(face, 1.8);
  const sharp = await loadSharp();
  const jpeg = await sharp(samplePath(face.sample)).extract(region).resize(160, 200, { fit: 'cover' }).jpeg({ quality: 85 }).toBuffer();
  return jpeg.toString('base64');
}

/** The faces the sandbox's test identities wear: each the largest face of its photo. */
export const TEST_IDENTITY_FACES = {
  bvn: { sample: 6, box: { x: 250, y: 468, width: 210, height: 291 } },
  nin: { sample: 2, box: { x: 1447, y: 153, width: 194, height: 242 } },
  drivers_license: { sample: 3, box: { x: 1075, y: 215, width: 220, height: 299 } },
} as const satisfies Record<string, SampleFace>;
