import { readFile } from 'node:fs/promises';
import { describe, expect, it } from 'vitest';
import { generateSchemaTypes, openApiDocument, SCHEMA_FILE } from '../../scripts/openapi-types.js';

describe("the web app's API types", () => {
  it('match the OpenAPI document the routes produce (run `npm run web:types` when this fails)', async () => {
    const committed = await readFile(SCHEMA_FILE, 'utf8');
    expect(committed === (await generateSchemaTypes()), 'web/src/api/schema.d.ts is stale: run npm run web:types').toBe(true);
  });

  it('give every portal operation an operationId, a tag and the session security', async () => {
    const document = (await openApiDocument()) as { paths: Record<string, Record<string, { operationId?: string; tags?: string[]; security?: unknown[] }>> };
    const operations = Object.entries(document.paths)
      .filter(([p]) => p.startsWith('/api/'))
      .flatMap(([p, methods]) => Object.entries(methods).map(([method, op]) => ({ where: `${method} ${p}`, ...op })));
    expect(operations.length).toBeGreaterThan(40);
    const ids = operations.map((op) => op.operationId);
    expect(ids.filter((id) => !id), 'operations without an operationId').toEqual([]);
    expect(new Set(ids).size).toBe(ids.length);
    expect(operations.filter((op) => !op.tags?.includes('Portal')).map((op) => op.where)).toEqual([]);
  });
});
