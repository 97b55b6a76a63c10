import { readFile } from 'node:fs/promises';
import { describe, expect, it } from 'vitest';
import { API_TYPES_FILE, generateApiTypes } from '../../scripts/openapi-types.js';

describe('the /v1 API types the client test is checked against', () => {
  it('match the OpenAPI document the routes produce (run `npm run api:types` when this fails)', async () => {
    const committed = await readFile(API_TYPES_FILE, 'utf8');
    expect(committed === (await generateApiTypes()), 'test/generated/api.d.ts is stale: run npm run api:types').toBe(true);
  });
});
