import { QueryClient } from '@tanstack/react-query';
import { ApiRequestError } from './client';

/** The web app's one QueryClient. Client errors (4xx) are answers, not hiccups: never retried. */
export const queryClient = new QueryClient({
  defaultOptions: {
    queries: {
      staleTime: 10_000,
      retry: (failures, error) => !(error instanceof ApiRequestError && error.status >= 400 && error.status < 500) && failures < 2,
      refetchOnWindowFocus: false,
    },
  },
});
