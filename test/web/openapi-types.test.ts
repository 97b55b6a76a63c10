import { readFile } from 'node:fs/promises';
import { describe, expect, it } from 'vitest';
import { generateSchemaTypes, openApiDocument, SCHEMA_FILE } from '../../scripts/openapi-types.js';

describe("the web app's API types", () => {
  it('match the OpenAPI document the routes produce (run `npm run web:types` when this fails)', async () => {
    const committed = await readFile(SCHEMA_FILE, 'utf8');
    expect(committed === (await generateSchemaTypes()), 'web/src/api/schema.d.ts is stale: run npm run web:types').toBe(true);
  });

  it('give every portal and console operation an operationId, its tag and the session security', async () => {
    const document = (await openApiDocument()) as { paths: Record<string, Record<string, { operationId?: string; tags?: string[]; security?: unknown[] }>> };
    const operations = Object.entries(document.paths)
      .filter(([p]) => p.startsWith('/api/'))
      .flatMap(([p, methods]) => Object.entries(methods).map(([method, op]) => ({ where: `${method} ${p}`, ...op })));
    expect(operations.length).toBeGreaterThan(40);
    const ids = operations.map((op) => op.operationId);
    expect(ids.filter((id) => !id), 'operations without an operationId').toEqual([]);
    expect(new Set(ids).size).toBe(ids.length);
    // The operator console's and the field app's APIs have a tag each; everything else under /api is the portal's.
    const tagOf = (where: string) => (where.includes(' /api/console/') ? 'Console' : where.includes(' /api/field/') ? 'Field' : 'Portal');
    expect(operations.filter((op) => !op.tags?.includes(tagOf(op.where))).map((op) => op.where)).toEqual([]);
    for (const tag of ['Console', 'Field']) {
      expect(operations.filter((op) => tagOf(op.where) === tag).length).toBeGreaterThan(0);
      expect(operations.filter((op) => tagOf(op.where) === tag && JSON.stringify(op.security) !== JSON.stringify([{ session: [] }])).map((op) => op.where)).toEqual([]);
    }
  });
});
