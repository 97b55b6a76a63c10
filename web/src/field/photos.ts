/** The longest side of a photo as it is sent: enough to read a house number, a few hundred KB. */
export const MAX_PHOTO_SIDE = 1600;
const QUALITY = 0.85;

/**
 * A camera photo made smaller in the browser before it is kept or sent: at most MAX_PHOTO_SIDE
 * pixels on its longest side, as JPEG, turned upright by its EXIF orientation. A phone's 12 MP
 * photo (3-5 MB) becomes about 300 KB, which a weak connection can carry.
 */
export async function downscalePhoto(file: Blob, maxSide = MAX_PHOTO_SIDE): Promise<Blob> {
  let bitmap: ImageBitmap;
  try {
    bitmap = await createImageBitmap(file, { imageOrientation: 'from-image' });
  } catch {
    throw new Error('This file is not a photo the browser can read; take the photo again');
  }
  const scale = Math.min(1, maxSide / Math.max(bitmap.width, bitmap.height));
  const width = Math.max(1, Math.round(bitmap.width * scale));
  const height = Math.max(1, Math.round(bitmap.height * scale));
  const canvas = document.createElement('canvas');
  canvas.width = width;
  canvas.height = height;
  const context = canvas.getContext('2d');
  if (!context) throw new Error('The browser could not prepare the photo; try again');
  context.drawImage(bitmap, 0, 0, width, height);
  bitmap.close();
  return new Promise((resolve, reject) => {
    canvas.toBlob((blob) => (blob ? resolve(blob) : reject(new Error('The browser could not prepare the photo; try again'))), 'image/jpeg', QUALITY);
  });
}
