// The status word of a tenant: its stored status, except that an active tenant whose usage has reached
// a limit (GET /api/quota/status/all `exceeded`) is "over quota", not "active". Pure (unit
// tested in test/unit/web-manage-forms.test.ts).
import { codeWords } from '../../ui/format.ts';

export interface TenantStatusWord {
  word: string;
  /** Shown in the warning style. */
  bad: boolean;
  /** The limits reached, in words ("Daily tokens"). */
  reached: string[];
}

export function tenantStatusWord(status: string, exceeded: readonly string[] = []): TenantStatusWord {
  const reached = exceeded.map(codeWords);
  if (status === 'active' && reached.length > 0) return { word: 'over quota', bad: true, reached };
  return { word: codeWords(status).toLowerCase(), bad: status === 'suspended', reached };
}
