// The one shape every chat platform's org directory is read through (issue 12 item 4; spec document 2,
// "Organization sync and alert webhooks"). Types only: the adapters (services/orgsync/chatplat-a.ts,
// chatplat-b.ts) speak each platform's own API and hand back these shapes; the workflow
// (workflows/orgsync/sync.ts) walks the tree one page at a time; reconcile.ts turns a snapshot into a plan.
//
// Paging: every list call takes an opaque `cursor` (null = first page) and answers `nextCursor`
// (null = last page). Departments are listed one parent at a time (direct children), so the workflow
// walks the tree breadth-first from `org_sync_root_dept_id` (the platform's root when unset).
//
// Access tokens: each adapter fetches one with the app key and secret and caches it until its expiry
// minus a margin (TOKEN_EXPIRY_MARGIN_MS); the secret is read from settings inside the activity and
// never leaves the adapter (not in errors, logs, workflow inputs or histories).

export const PLATFORMS = ['chatplat_a', 'chatplat_b'] as const;
export type Platform = (typeof PLATFORMS)[number];

export const isPlatform = (v: unknown): v is Platform => (PLATFORMS as readonly unknown[]).includes(v);

/** A cached access token is renewed this long before the platform says it expires. */
export const TOKEN_EXPIRY_MARGIN_MS = 5 * 60_000;

export interface PlatformDepartment {
  /** The platform's department id (string form). */
  id: string;
  name: string;
  /** null for a department directly under the platform's root. */
  parentId: string | null;
  /** The department's group chat, when the platform names one (display-name cache of groups). */
  chatId?: string | null;
}

export interface PlatformUser {
  /** The platform's stable user id within the organization. */
  id: string;
  name: string;
  email: string | null;
  mobile: string | null;
  /** Every department the user belongs to (the platform's full list, possibly outside the root). */
  departmentIds: string[];
}

export interface Page<T> {
  items: T[];
  nextCursor: string | null;
}

export interface OrgDirectory {
  readonly platform: Platform;
  /** The platform's root department id (`1` on chatplat_a, `0` on chatplat_b). */
  readonly rootDepartmentId: string;
  /** Direct children of `parentId`, one page. */
  listDepartments(parentId: string, cursor: string | null): Promise<Page<PlatformDepartment>>;
  /** Users directly in `departmentId`, one page. */
  listDepartmentUsers(departmentId: string, cursor: string | null): Promise<Page<PlatformUser>>;
}

/**
 * Why a platform call failed. `rate_limited` and `unavailable` (5xx, network) are retried with
 * backoff (`retryAfterMs`: the platform's own hint, when it gave one); `auth` (bad key or secret,
 * missing permission) and `rejected` (any other error envelope) are final.
 */
export type PlatformErrorKind = 'rate_limited' | 'unavailable' | 'auth' | 'rejected';

export class PlatformApiError extends Error {
  constructor(
    readonly platform: Platform,
    readonly kind: PlatformErrorKind,
    message: string,
    /** The platform's error code (errcode / code), or the HTTP status. */
    readonly code: number | null = null,
    readonly retryAfterMs: number | null = null,
  ) {
    super(message);
    this.name = 'PlatformApiError';
  }
  get retryable(): boolean {
    return this.kind === 'rate_limited' || this.kind === 'unavailable';
  }
}

/** The credentials and address of one platform, from settings (chatplat_a / chatplat_b sections). */
export interface PlatformCredentials {
  appKey: string;
  appSecret: string;
  baseUrl: string;
}
