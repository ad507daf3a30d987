// The current user, read from the API's public GET /api/auth/check (valid session or not), kept in a
// context every page can read with useAuth(). logout() ends the session (POST /api/auth/logout).
// `viewer` is what auth/access.ts decides pages from: role, permissions and, for anyone but a system
// administrator, whether a machine names them its administrator (read once from GET /api/remote/machines).
import { type ComponentChildren, createContext } from 'preact';
import { useCallback, useContext, useEffect, useMemo, useState } from 'preact/hooks';
import { api } from '../api/client.ts';
import { isSystemAdmin, type Viewer } from './access.ts';

export interface CurrentUser {
  id: number;
  username: string;
  email: string | null;
  role: string;
  tenant_id: number | null;
  /** System administrator. */
  is_admin: boolean;
  must_change_password: boolean;
  /** Effective permissions (admin_access passes every check). */
  permissions: string[];
}

interface AuthState {
  /** undefined while loading, null when not signed in. */
  user: CurrentUser | null | undefined;
  /** undefined until known (machine administration is read after the user). */
  viewer: Viewer | undefined;
  refresh(): Promise<CurrentUser | null>;
  logout(): Promise<void>;
}

const AuthContext = createContext<AuthState>({
  user: undefined,
  viewer: undefined,
  refresh: async () => null,
  logout: async () => {},
});

export const useAuth = () => useContext(AuthContext);

export function AuthProvider({ children }: { children: ComponentChildren }) {
  const [user, setUser] = useState<CurrentUser | null | undefined>(undefined);
  const refresh = useCallback(async () => {
    const r = await api.get<{ authenticated: boolean; user: CurrentUser }>('/api/auth/check', {
      noRedirect: true,
    });
    const u = r.authenticated ? r.user : null;
    setUser(u);
    return u;
  }, []);
  const logout = useCallback(async () => {
    try {
      await api.post('/api/auth/logout', {}, { noRedirect: true });
    } finally {
      setUser(null);
    }
  }, []);
  useEffect(() => {
    refresh().catch(() => setUser(null));
  }, [refresh]);
  const machineAdmin = useMachineAdmin(user);
  const viewer = useMemo<Viewer | undefined>(
    () =>
      user && machineAdmin !== undefined
        ? { role: user.role, permissions: user.permissions ?? [], machineAdmin }
        : undefined,
    [user, machineAdmin],
  );
  return <AuthContext.Provider value={{ user, viewer, refresh, logout }}>{children}</AuthContext.Provider>;
}

/** Whether a machine names `user` its administrator; a system administrator needs no assignment. */
function useMachineAdmin(user: CurrentUser | null | undefined): boolean | undefined {
  const [known, setKnown] = useState<{ id: number; admin: boolean } | null>(null);
  const id = user?.id;
  const system = !!user && isSystemAdmin(user);
  const ready = !!user && !user.must_change_password;
  useEffect(() => {
    if (id == null || system || !ready) return;
    const ctl = new AbortController();
    api
      .get<{ machines: { current_user_permission?: string }[] }>('/api/remote/machines', {
        signal: ctl.signal,
        noRedirect: true,
      })
      .then((r) => setKnown({ id, admin: r.machines.some((m) => m.current_user_permission === 'admin') }))
      // Unknown is the same as none: the page is not offered, the API would refuse it anyway.
      .catch(() => !ctl.signal.aborted && setKnown({ id, admin: false }));
    return () => ctl.abort();
  }, [id, system, ready]);
  if (!user) return undefined;
  if (system) return true;
  if (!ready) return false;
  return known?.id === user.id ? known.admin : undefined;
}
