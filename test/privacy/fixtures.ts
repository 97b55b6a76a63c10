import fs from 'node:fs/promises';
import path from 'node:path';
import type { FastifyInstance } from 'fastify';
import type { Kysely } from 'kysely';
import sharp from 'sharp';
import { expect } from 'vitest';
import { createAgent } from '../../src/agents/service.js';
import type { DB } from '../../src/platform/db/schema.js';
import { multipartBody } from '../agents/fixtures.js';
import { bearer } from '../helpers/app.js';

export const LAGOS_ADDRESS = { street: '12 Akinola Cole Crescent', landmark: 'Opposite the mosque', lga: 'Eti-Osa', state: 'Lagos' };

/**
 * The agent who files the reports. Test files share this module in a worker and a worker's
 * database is emptied between files, so the agent is looked up again before it is reused.
 */
let reporter: { id: string; credential: string } | undefined;

/** A photo (distinct bytes per seed). */
export function photo(seed: number): Promise<Buffer> {
  return sharp({ create: { width: 32, height: 24, channels: 3, background: { r: seed % 256, g: 90, b: 40 } } }).jpeg({ quality: 90 }).toBuffer();
}

/** A live address verification an agent visits and reports on with two photos (verified); its id. */
export async function visitedAddress(app: FastifyInstance, db: Kysely<DB>, secret: string, body: object, neighbour: Record<string, string>, seed: number): Promise<number> {
  const known = reporter && (await db.selectFrom('field_agents').select('id').where('id', '=', reporter.id).executeTakeFirst());
  if (!known) {
    const created = await createAgent(db, { name: 'Privacy Agent', email: `privacy-${Date.now()}@agents.example`, phone: '08030000009', states: ['Lagos'] });
    reporter = { id: created.agent.id, credential: created.credential };
  }
  const agentCredential = reporter!.credential;
  const created = await app.inject({ method: 'POST', url: '/v1/verifications/addresses', headers: bearer(secret), payload: { ...LAGOS_ADDRESS, ...body } });
  expect(created.statusCode, created.body).toBe(201);
  const id = created.json().data.id as number;
  const form = multipartBody({ outcome: 'verified', latitude: 6.4474, longitude: 3.4723, ...neighbour }, [
    { filename: 'front.jpg', type: 'image/jpeg', bytes: await photo(seed) },
    { filename: 'gate.jpg', type: 'image/jpeg', bytes: await photo(seed + 1) },
  ]);
  const filed = await app.inject({ method: 'POST', url: `/v1/agent/tasks/address/${id}/report`, headers: { ...bearer(agentCredential), ...form.headers }, payload: form.payload });
  expect(filed.statusCode, filed.body).toBe(200);
  return id;
}

/** The files in a disk store. */
export async function storedFiles(dataDir: string): Promise<string[]> {
  const root = path.join(dataDir, 'files');
  const entries = await fs.readdir(root, { recursive: true, withFileTypes: true }).catch(() => []);
  return entries.filter((entry) => entry.isFile()).map((entry) => entry.name);
}

export const DAY = 86_400_000;
export const after = (from: Date, ms: number) => new Date(from.getTime() + ms);
