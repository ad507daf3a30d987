// The tenants for the tenant pickers of the /manage pages (GET /api/tenants, system administrators),
// and a name for a tenant id in tables.
import { api } from '../../api/client.ts';
import type { Tenant } from './types.ts';
import { useResource } from './use-resource.ts';

export function useTenants() {
  return useResource((signal) =>
    api.get<{ tenants: Tenant[] }>('/api/tenants', { signal }).then((r) => r.tenants),
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
