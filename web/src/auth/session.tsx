// The current user, read from the API's public GET /api/auth/check (valid session or not), kept in a
// context every page can read with useAuth(). logout() ends the session (POST /api/auth/logout).
import { type ComponentChildren, createContext } from 'preact';
import { useCallback, useContext, useEffect, useState } from 'preact/hooks';
import { api } from '../api/client.ts';

export interface CurrentUser {
  id: number;
  username: string;
  email: string | null;
  role: string;
  tenant_id: number | null;
  /** System administrator: the only role that sees /manage/*. */
  is_admin: boolean;
  must_change_password: boolean;
}

interface AuthState {
  /** undefined while loading, null when not signed in. */
  user: CurrentUser | null | undefined;
  refresh(): Promise<CurrentUser | null>;
  logout(): Promise<void>;
}

const AuthContext = createContext<AuthState>({
  user: undefined,
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
  return <AuthContext.Provider value={{ user, refresh, logout }}>{children}</AuthContext.Provider>;
}
