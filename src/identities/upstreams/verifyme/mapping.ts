import type { TObject, TSchema } from 'typebox';
import { RECORD_SCHEMAS } from '../../records.js';
import { recordTypeOf, UpstreamFailure, type UpstreamRecordOf, type UpstreamType } from '../adapter.js';

/** Types whose FULL payload carries `phone` (and `photo`); a HALF account's answer lacks the key. */
const FULL_PAYLOAD_TYPES: ReadonlySet<UpstreamType> = new Set(['nin', 'nin_phone', 'vnin']);

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function schemaType(schema: TSchema): string | undefined {
  return (schema as { type?: string }).type;
}

/**
 * The spec's `data` record as our registry record: `fieldMatches` dropped, fields our record
 * does not hold dropped, empty strings (how the spec renders an absent optional field) left
 * out, and numbers where we keep strings (`bvn`, `nin`, `rcNumber` appear as both) made strings.
 * Messages name fields, never values: they are logged.
 */
export function toRecord<T extends UpstreamType>(type: T, key: string, data: unknown): UpstreamRecordOf[T] {
  if (!isObject(data)) throw new UpstreamFailure('malformed', 'data is not an object');
  if (FULL_PAYLOAD_TYPES.has(type) && !('phone' in data)) {
    throw new UpstreamFailure('refused', 'the answer has no phone: the upstream account has payload type HALF; it must be FULL');
  }
  const schema = RECORD_SCHEMAS[recordTypeOf(type)] as TObject;
  const required = new Set(schema.required ?? []);
  const record: Record<string, unknown> = {};
  for (const [field, fieldSchema] of Object.entries(schema.properties)) {
    let value = data[field];
    if (value === undefined || value === null || value === '') {
      if (required.has(field) && !(type === 'cac' && field === 'type')) throw new UpstreamFailure('malformed', `data.${field} is missing`);
      continue;
    }
    if (typeof value === 'number' && schemaType(fieldSchema) === 'string') value = String(value);
    record[field] = value;
  }
  // The spec's company record does not repeat the registry type that was asked for.
  if (type === 'cac') record.type = key.split(':')[0];
  return record as UpstreamRecordOf[T];
}
