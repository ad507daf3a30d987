// The tenants for the tenant pickers of the /manage pages (GET /api/tenants, system administrators;
// anyone else acts in their own tenant, gets no picker and asks nothing), and a name for a tenant id.
import { api } from '../../api/client.ts';
import { isSystemAdmin } from '../../auth/access.ts';
import { useAuth } from '../../auth/session.tsx';
import type { Tenant } from './types.ts';
import { useResource } from './use-resource.ts';

export function useTenants() {
  const { viewer } = useAuth();
  const system = !!viewer && isSystemAdmin(viewer);
  return useResource(
    async (signal): Promise<Tenant[]> =>
      system ? (await api.get<{ tenants: Tenant[] }>('/api/tenants', { signal })).tenants : [],
    [system],
  );
}

export function tenantOptions(tenants: Tenant[] | undefined, none?: string) {
  return [
    ...(none !== undefined ? [{ value: '', label: none }] : []),
    ...(tenants ?? []).map((t) => ({ value: String(t.id), label: `${t.name} (${t.slug})` })),
  ];
}

export function tenantName(tenants: Tenant[] | undefined, id: number | null | undefined): string {
  if (id == null) return '—';
  return tenants?.find((t) => t.id === id)?.name ?? `#${id}`;
}
