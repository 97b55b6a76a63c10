import { useQuery, useQueryClient } from '@tanstack/react-query';
import { createContext, useCallback, useContext, useMemo, useState, type ReactNode } from 'react';
import { api, ApiRequestError, toSignIn, unwrap } from '../api/client';
import type { components, operations } from '../api/schema';

type Me = operations['portalMe']['responses'][200]['content']['application/json'];
export type Membership = Me['memberships'][number];
export type Mode = 'test' | 'live';
export type { components };

/**
 * The signed-in person and their memberships; signed out sends them to the sign-in page. The
 * session is asked about first (200 either way): a signed-out visit then makes no request the
 * browser would log as a failed one (a 401 is logged in red in its console).
 */
export function useMe() {
  return useQuery({
    queryKey: ['me'],
    queryFn: async () => {
      const { signedIn } = await unwrap(api.GET('/api/session'));
      if (!signedIn) {
        toSignIn();
        throw new ApiRequestError(401, 'ACCESS_DENIED', 'Sign in to continue');
      }
      return unwrap(api.GET('/api/me'));
    },
  });
}

/** Signs out (a session that already ended is fine), forgets every cached answer and goes to `to`. */
export function useSignOut(to = '/login'): () => Promise<void> {
  const queryClient = useQueryClient();
  return useCallback(async () => {
    await unwrap(api.POST('/api/auth/sign-out'), { redirectOn401: false }).catch(() => undefined);
    queryClient.clear();
    window.location.assign(to);
  }, [queryClient, to]);
}

interface PortalState {
  me: Me;
  org: Membership;
  setOrgId(id: string): void;
  mode: Mode;
  setMode(mode: Mode): void;
}

const PortalContext = createContext<PortalState | undefined>(undefined);

/** Where the portal remembers the organization in view (set after joining one, too). */
export const ORG_KEY = 'vouch.org';
const MODE_KEY = 'vouch.mode';

/** Which organization and which mode (test or live) the portal shows; remembered on this device. */
export function PortalProvider({ me, children }: { me: Me; children: ReactNode }) {
  const [orgId, setOrgIdState] = useState(() => localStorage.getItem(ORG_KEY));
  const [mode, setModeState] = useState<Mode>(() => (localStorage.getItem(MODE_KEY) === 'live' ? 'live' : 'test'));
  const org = me.memberships.find((m) => m.orgId === orgId) ?? me.memberships[0];
  const setOrgId = useCallback((id: string) => {
    localStorage.setItem(ORG_KEY, id);
    setOrgIdState(id);
  }, []);
  const setMode = useCallback((next: Mode) => {
    localStorage.setItem(MODE_KEY, next);
    setModeState(next);
  }, []);
  const value = useMemo(() => (org ? { me, org, setOrgId, mode, setMode } : undefined), [me, org, setOrgId, mode, setMode]);
  if (!value) return <>{children}</>;
  return <PortalContext.Provider value={value}>{children}</PortalContext.Provider>;
}

function usePortal(): PortalState {
  const state = useContext(PortalContext);
  if (!state) throw new Error('usePortal outside an organization');
  return state;
}

/** The organization the person is looking at, with their role and what it allows. */
export function useCurrentOrg() {
  const { org } = usePortal();
  return {
    orgId: org.orgId,
    orgName: org.orgName,
    role: org.role,
    enabled: org.enabled,
    /** The operator made consent required: its create forms must send it (the server answers 400 otherwise). */
    consentRequired: org.consentRequired,
    can: (permission: string) => org.permissions.includes(permission),
  };
}

export function useMode(): [Mode, (mode: Mode) => void] {
  const { mode, setMode } = usePortal();
  return [mode, setMode];
}

export function usePortalState(): PortalState {
  return usePortal();
}

/** Whether a provider with an organization is around (the layout shows an empty state otherwise). */
export function useHasOrg(): boolean {
  return useContext(PortalContext) !== undefined;
}
