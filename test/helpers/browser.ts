import { existsSync } from 'node:fs';
import type { FastifyInstance } from 'fastify';
import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core';
import { buildTestContext, type TestContext, type TestContextOptions } from './app.js';

/** Debian's Chromium; CI installs it (`apt-get install -y chromium`). */
export const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';

/**
 * One Chromium per test worker, shared by the worker's files one after another (isolate: false):
 * starting it costs seconds; each file still gets browser contexts of its own (own cookies and
 * storage), which it closes. Playwright ends the browser when the worker process exits.
 */
let shared: Promise<Browser> | undefined;

export function launchBrowser(): Promise<Browser> {
  if (!existsSync(CHROMIUM)) return Promise.reject(new Error(`Chromium is missing at ${CHROMIUM}: install it with apt-get install -y chromium`));
  const launching = shared?.then((browser) => (browser.isConnected() ? browser : undefined));
  shared = (launching ?? Promise.resolve(undefined)).then(
    (browser) => browser ?? chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox', '--disable-dev-shm-usage'] }),
  );
  // A failed launch is not kept: the next file tries again.
  shared.catch(() => (shared = undefined));
  return shared;
}

export interface WebContext extends TestContext {
  /** http://127.0.0.1:PORT: the app on a real socket, its public URL too. */
  baseUrl: string;
  browser: Browser;
  /** A fresh browser context (its own cookies) and page; phone width when asked. */
  newPage(options?: { phone?: boolean }): Promise<{ context: BrowserContext; page: Page }>;
}

/**
 * The app on a real socket with its public URL set to that address (mailed links and the CSRF
 * check agree with the browser), and the worker's Chromium; `close` closes the file's contexts.
 */
export async function buildWebContext(options: TestContextOptions = {}): Promise<WebContext> {
  const reserved = await portProbe();
  const baseUrl = `http://127.0.0.1:${reserved}`;
  const ctx = await buildTestContext({ ...options, config: { publicUrl: baseUrl, ...options.config } });
  await ctx.app.listen({ port: reserved, host: '127.0.0.1' });
  const browser = await launchBrowser();
  const contexts = new Set<BrowserContext>();
  return {
    ...ctx,
    baseUrl,
    browser,
    async newPage({ phone = false } = {}) {
      const context = await browser.newContext({
        baseURL: baseUrl,
        viewport: phone ? { width: 390, height: 844 } : { width: 1280, height: 800 },
        deviceScaleFactor: 1,
        isMobile: phone,
        hasTouch: phone,
      });
      contexts.add(context);
      context.once('close', () => contexts.delete(context));
      return { context, page: await context.newPage() };
    },
    close: async () => {
      await Promise.all([...contexts].map((context) => context.close()));
      await ctx.close();
    },
  };
}

/** A free port, so the public URL can be set before the app is built. */
async function portProbe(): Promise<number> {
  const { createServer } = await import('node:net');
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() => resolve(typeof address === 'object' && address ? address.port : 0));
    });
  });
}

/**
 * The page as people see it, saved to docs/images/NAME.png for the docs, but only when
 * VOUCH_SCREENSHOTS=1 (`VOUCH_SCREENSHOTS=1 npx vitest run test/web` refreshes them): the suite
 * itself neither waits for the pictures nor rewrites the committed files on every run.
 */
export async function screenshot(page: Page, name: string): Promise<void> {
  if (!process.env.VOUCH_SCREENSHOTS) return;
  // Let lazy chunks and queries settle, and start from the top: the fixed header would
  // otherwise be drawn where the page was scrolled to.
  await page.waitForLoadState('networkidle');
  await page.evaluate(() => window.scrollTo(0, 0));
  await page.screenshot({ path: `docs/images/${name}.png`, fullPage: true });
}

/** Collects console errors and failed page loads, so a test can assert a page ran cleanly. */
export function watchErrors(page: Page): string[] {
  const errors: string[] = [];
  page.on('console', (message) => {
    if (message.type() === 'error') errors.push(message.text());
  });
  page.on('pageerror', (error) => errors.push(error.message));
  return errors;
}

export type { FastifyInstance };
