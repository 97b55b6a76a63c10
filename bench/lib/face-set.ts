import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

/**
 * The identity-labelled photos the face benchmarks measure on (../shared/faces beside the
 * repository, or `--faces DIR`): LFW photos in lfw-subset/ and labels/eval_set.json. They are read
 * from there at run time only, for evaluation, never copied into this repository.
 */

export interface EvalEntry {
  /** The photo, relative to lfw-subset/. */
  path: string;
  /** The person. */
  id: string;
  group: string;
  /** For Black people: african, diaspora or mixed. */
  tier?: string;
}

export interface LabelledSet {
  dir: string;
  entries: EvalEntry[];
  /** The photo's bytes. */
  read(entry: EvalEntry | string): Promise<Buffer>;
}

export const REPO_ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');

/** The set, or undefined after saying on stdout, in one line, that `script` skips for want of it (it downloads nothing). */
export async function labelledSet(script: string, facesOption: string | undefined): Promise<LabelledSet | undefined> {
  const dir = path.resolve(REPO_ROOT, facesOption ?? '../shared/faces');
  const evalSet = path.join(dir, 'labels', 'eval_set.json');
  const photos = path.join(dir, 'lfw-subset');
  if (!existsSync(evalSet) || !existsSync(photos)) {
    process.stdout.write(`${script}: skipped, no face data: ${evalSet} or ${photos} is missing (see --faces)\n`);
    return undefined;
  }
  const entries = JSON.parse(await readFile(evalSet, 'utf8')) as EvalEntry[];
  return { dir, entries, read: (entry) => readFile(path.join(photos, typeof entry === 'string' ? entry : entry.path)) };
}
