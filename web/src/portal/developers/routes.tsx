import type { AnyRoute } from '@tanstack/react-router';
import { lazyPage } from '../../lazy-page';
import type { PortalRoute } from '../../router';

/** Getting started, API access, keys, webhooks and the sandbox outbox. */
export function developerRoutes(parent: PortalRoute): AnyRoute[] {
  const page = (path: string, load: () => Promise<Record<string, unknown>>, name: string) => lazyPage(parent, path, load, name);
  return [
    page('/', () => import('./GetStartedPage'), 'GetStartedPage'),
    page('/get-started', () => import('./GetStartedPage'), 'GetStartedPage'),
    page('/api-access', () => import('./ApiAccessPage'), 'ApiAccessPage'),
    page('/api-keys', () => import('./ApiKeysPage'), 'ApiKeysPage'),
    page('/webhooks', () => import('./WebhooksPage'), 'WebhooksPage'),
    page('/sandbox-outbox', () => import('./SandboxOutboxPage'), 'SandboxOutboxPage'),
  ];
}
