// Who sees and who changes a prompt template, pure (spec document 2 rule 5: templates are per tenant;
// issue 11 item 6: public vs own). Decided here once; the repository turns a viewer into SQL.
//   - a system administrator sees and changes every template;
//   - a tenant administrator (or holder of admin_access) sees and changes every template of its tenant;
//   - any other user sees its own templates and the public ones of its own tenant, changes its own;
//   - a user without a tenant sees only its own templates (no tenant's public ones);
//   - is_featured is set by administrators only; featured templates are listed to whoever can see them.
// A template the caller cannot see is a 404 (its existence is not disclosed); one it can see but not
// change is a 403.
import { isAdministrator, isSystemAdmin } from '../access.ts';

export type PromptViewer =
  | { kind: 'all'; userId: number }
  | { kind: 'tenant-admin'; userId: number; tenantId: number }
  | { kind: 'member'; userId: number; tenantId: number }
  | { kind: 'own'; userId: number };

export function promptViewer(
  user: { id: number; role: string; tenantId: number | null },
  permissions: ReadonlySet<string>,
): PromptViewer {
  if (isSystemAdmin(user)) return { kind: 'all', userId: user.id };
  if (user.tenantId == null) return { kind: 'own', userId: user.id };
  if (isAdministrator(user, permissions))
    return { kind: 'tenant-admin', userId: user.id, tenantId: user.tenantId };
  return { kind: 'member', userId: user.id, tenantId: user.tenantId };
}

export interface TemplateOwnership {
  authorId: number | null;
  tenantId: number | null;
  isPublic: boolean;
}

export function canSeeTemplate(v: PromptViewer, t: TemplateOwnership): boolean {
  if (v.kind === 'all' || t.authorId === v.userId) return true;
  if (v.kind === 'tenant-admin') return t.tenantId === v.tenantId;
  if (v.kind === 'member') return t.isPublic && t.tenantId === v.tenantId;
  return false;
}

export function canChangeTemplate(v: PromptViewer, t: TemplateOwnership): boolean {
  if (v.kind === 'all' || t.authorId === v.userId) return true;
  return v.kind === 'tenant-admin' && t.tenantId === v.tenantId;
}

export const canFeature = (v: PromptViewer) => v.kind === 'all' || v.kind === 'tenant-admin';
