// A tenant's autonomous settings (issue 25 item 2), the one place that reads and writes them:
//   - which roles may run and control workflows (domain/autonomous/run-permission.ts decides);
//   - the tenant's GitHub token: stored as Fernet ciphertext only (key = SVC_ENCRYPTION_KEY, as stored
//     provider keys), never returned (callers see `configured` and the last four characters), and
//     decrypted only by the forge selection of that tenant's workflows (services/forge/
//     forge-for-project.ts). The global SVC_GITHUB_TOKEN serves no tenant unless the operator names
//     the one tenant it belongs to (SVC_GITHUB_TOKEN_TENANT_ID): a single-tenant fallback, opted into.
import type { Settings } from '../../config/settings.ts';
import type { DatabaseHandle } from '../../db/client.ts';
import { tenantAutonomousRepository } from '../../db/repositories/autonomous/tenant-settings.ts';
import {
  formatRunRoles,
  parseRunRoles,
  type RunRole,
  runRefusal,
} from '../../domain/autonomous/run-permission.ts';
import { decryptSecret, encryptSecret } from '../../domain/crypto/fernet.ts';
import { ForbiddenError } from '../../domain/errors.ts';
import { type KeySettings, storageKey } from '../secrets.ts';

type Deps = { database: DatabaseHandle; settings: KeySettings };

export interface TenantAutonomousView {
  run_roles: RunRole[];
  github_token: { configured: boolean; hint: string | null };
}

/** Throws the 403 unless `user` may run and control autonomous workflows in its tenant. */
export async function assertMayRunAutonomous(
  database: DatabaseHandle,
  user: { role: string; tenantId: number | null },
): Promise<void> {
  const row =
    user.tenantId == null ? undefined : await tenantAutonomousRepository(database).find(user.tenantId);
  const refusal = runRefusal(user, parseRunRoles(row?.runRoles));
  if (refusal) throw new ForbiddenError(refusal);
}

export function tenantAutonomousSettings(deps: Deps) {
  const repo = tenantAutonomousRepository(deps.database);
  return {
    async view(tenantId: number): Promise<TenantAutonomousView> {
      const row = await repo.find(tenantId);
      return {
        run_roles: parseRunRoles(row?.runRoles),
        github_token: { configured: !!row?.githubTokenEncrypted, hint: row?.githubTokenHint ?? null },
      };
    },

    /** `githubToken`: a new token, null to remove it, undefined to leave it. */
    async update(
      tenantId: number,
      patch: { runRoles?: RunRole[]; githubToken?: string | null },
      by: number,
      at: Date,
    ): Promise<void> {
      const token = patch.githubToken;
      await repo.put(
        tenantId,
        {
          ...(patch.runRoles ? { runRoles: formatRunRoles(patch.runRoles) } : {}),
          ...(token === undefined
            ? {}
            : token === null
              ? { githubTokenEncrypted: null, githubTokenHint: null }
              : {
                  githubTokenEncrypted: encryptSecret(token, storageKey(deps.settings)),
                  githubTokenHint: token.length >= 12 ? token.slice(-4) : null,
                }),
        },
        by,
        at,
      );
    },
  };
}

export type GitHubTokenSettings = KeySettings &
  Pick<Settings, 'SVC_GITHUB_TOKEN' | 'SVC_GITHUB_TOKEN_TENANT_ID'>;

/**
 * The GitHub token for a tenant's workflows: its own, else SVC_GITHUB_TOKEN when the operator gave it
 * to that tenant (SVC_GITHUB_TOKEN_TENANT_ID), else null.
 */
export async function githubTokenForTenant(
  deps: { database: DatabaseHandle; settings: GitHubTokenSettings },
  tenantId: number | null,
): Promise<string | null> {
  if (tenantId == null) return null;
  const row = await tenantAutonomousRepository(deps.database).find(tenantId);
  if (row?.githubTokenEncrypted) return decryptSecret(row.githubTokenEncrypted, storageKey(deps.settings));
  const s = deps.settings;
  return s.SVC_GITHUB_TOKEN && s.SVC_GITHUB_TOKEN_TENANT_ID === tenantId ? s.SVC_GITHUB_TOKEN : null;
}
