// Response shapes of the administration endpoints as the pages use them (see api/routes/*).
export interface Tenant {
  id: number;
  name: string;
  slug: string;
  status: string;
  plan: string;
  contact_email: string | null;
  contact_name: string | null;
  trial_ends_at: string | null;
  user_count: number;
  total_tokens_used: number;
  created_at: string;
}
export interface TenantDetail extends Tenant {
  settings: {
    content_filter_enabled: boolean;
    audit_log_enabled: boolean;
    audit_log_retention_days: number;
    data_retention_days: number;
    sso_enabled: boolean;
  };
  quota: {
    daily_token_limit: number;
    monthly_token_limit: number;
    daily_request_limit: number;
    monthly_request_limit: number;
    max_users: number;
    max_sessions_per_user: number;
  };
}
export interface User {
  id: number;
  username: string;
  email: string | null;
  role: string;
  is_active: boolean;
  created_at: string;
  tenant_id: number | null;
  must_change_password: boolean;
  last_login_at: string | null;
  daily_token_quota: number | null;
  monthly_token_quota: number | null;
  daily_request_quota: number | null;
  monthly_request_quota: number | null;
}
export interface StoredKey {
  id: number;
  tenant_id: number;
  provider: string;
  key_name: string;
  masked_key: string;
  base_url: string | null;
  is_active: boolean;
  created_at: string;
}
export interface Machine {
  machine_id: string;
  machine_name: string | null;
  hostname: string | null;
  os_type: string | null;
  status: string;
  agent_version: string | null;
  tenant_id: number | null;
  last_heartbeat: string | null;
  created_at: string | null;
  /** Listings for anyone but a system administrator: the caller's assignment. */
  current_user_permission?: 'user' | 'admin';
}
export interface RegistrationToken {
  id: number;
  tenant_id: number;
  machine_id: string | null;
  created_at: string;
  expires_at: string | null;
  consumed_at: string | null;
  consumed_by_machine_id: string | null;
  status: string;
}
export interface AuditRecord {
  id: number;
  timestamp: string;
  username: string | null;
  tenant_id: number | null;
  action: string;
  severity: string;
  resource_type: string | null;
  resource_id: string | null;
  details: unknown;
  ip_address: string | null;
  success: boolean;
}
export interface FilterRule {
  id: number;
  pattern: string;
  type: 'keyword' | 'regex';
  severity: 'low' | 'medium' | 'high';
  action: 'warn' | 'block' | 'review';
  description: string | null;
  is_enabled: boolean;
  tenant_id: number | null;
}
export interface SsoProvider {
  name: string;
  provider_type: string;
  login_url: string;
  tenant_id?: number | null;
}

export const ROLES = ['platform_admin', 'tenant_admin', 'manager', 'user', 'readonly'] as const;
export const KEY_PROVIDERS = ['openai', 'anthropic', 'gemini'] as const;
