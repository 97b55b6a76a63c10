import type { AnyRoute } from '@tanstack/react-router';
import { lazyPage } from '../lazy-page';

/** The field app's pages under /field: the task list, a task, its report. */
export function fieldRoutes(parent: AnyRoute): AnyRoute[] {
  return [
    lazyPage(parent, '/', () => import('./TasksPage'), 'TasksPage'),
    lazyPage(parent, '/tasks/$kind/$id', () => import('./TaskPage'), 'TaskPage'),
    lazyPage(parent, '/tasks/$kind/$id/report', () => import('./ReportPage'), 'ReportPage'),
  ];
}
