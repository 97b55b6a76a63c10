import { createRoute, lazyRouteComponent, type AnyRoute } from '@tanstack/react-router';

/** A route whose page component (a named export) loads as its own chunk on first visit. */
export function lazyPage(parent: AnyRoute, path: string, load: () => Promise<Record<string, unknown>>, name: string): AnyRoute {
  return createRoute({ getParentRoute: () => parent, path, component: lazyRouteComponent(load as never, name as never) }) as unknown as AnyRoute;
}
