import { createHash } from 'node:crypto';
import type { ListEntity } from '../entity.js';

/**
 * An entity as one JSON text that does not depend on how the parser built the object: keys
 * sorted, undefined and empty optional values dropped. Two versions of an entry are "the same"
 * when their canonical texts are, so a parser that reorders fields does not make a version.
 */
export function canonicalJson(entity: ListEntity): string {
  return JSON.stringify(sortKeys(entity));
}

function sortKeys(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(sortKeys);
  if (value === null || typeof value !== 'object') return value;
  const out: Record<string, unknown> = {};
  for (const key of Object.keys(value).sort()) {
    const field = (value as Record<string, unknown>)[key];
    if (field === undefined) continue;
    out[key] = sortKeys(field);
  }
  return out;
}

export function sha256(text: string | Buffer): string {
  return createHash('sha256').update(text).digest('hex');
}
