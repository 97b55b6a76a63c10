import { createHash } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

/**
 * The ONNX models Vouch runs beside face-api, kept in the repository's models/ folder (where they
 * came from, their licence and how to fetch them again: models/README.md). Each file is checked
 * against the SHA-256 written here before it is used: a truncated or swapped model is an error at
 * load, not a silently different match.
 */
export const ONNX_MODELS = {
  /** The face descriptor: a 112×112 aligned face → 512 numbers (models/faceplugin/fr_feature.onnx). */
  feature: { file: 'faceplugin/fr_feature.onnx', sha256: '87aacdfe57510db2af90c0251df680e8eec88f122ee94712121d09bcaaaf3581' },
  /** Passive anti-spoofing: a face crop → live/spoof classes (models/faceplugin/fr_liveness.onnx). */
  liveness: { file: 'faceplugin/fr_liveness.onnx', sha256: 'afa783b7e902fdfcf323a7240cac2a1c580c25314ea4161129dc1b0d100dc32d' },
} as const;

export type OnnxModelName = keyof typeof ONNX_MODELS;

/** models/, found from src/ (tsx) and from dist/ (the build) alike. */
export function modelsDir(): string {
  let dir = path.dirname(fileURLToPath(import.meta.url));
  while (!existsSync(path.join(dir, 'package.json'))) {
    const parent = path.dirname(dir);
    if (parent === dir) throw new Error('models/: no package.json above this module');
    dir = parent;
  }
  return path.join(dir, 'models');
}

/** The model's path, after checking the file is the one this code was measured with. */
export function verifiedModelPath(name: OnnxModelName): string {
  const { file, sha256 } = ONNX_MODELS[name];
  const full = path.join(modelsDir(), file);
  if (!existsSync(full)) throw new Error(`face model missing: ${full} (it ships in the repository's models/ folder)`);
  const actual = createHash('sha256').update(readFileSync(full)).digest('hex');
  if (actual !== sha256) throw new Error(`face model ${full} is not the expected file (SHA-256 ${actual}, expected ${sha256})`);
  return full;
}
