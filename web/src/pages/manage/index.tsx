// /manage: the administration overview for system administrators: one entry per area with what it
// holds. Machine administrators act through the API only (spec document 1, item 8).
import { MANAGE_SECTIONS, ManagePage } from './layout.tsx';

const WHAT: Record<string, string> = {
  '/manage/users': 'Create users, change role, tenant and active state, reset passwords, set quotas.',
  '/manage/tenants': 'Create tenants, set their quotas and settings, suspend and activate them.',
  '/manage/machines': 'Registration tokens with the agent install command, and the registered machines.',
  '/manage/keys': 'Stored model provider keys: add (write-only), deactivate, delete.',
  '/manage/sso': 'Identity providers (OIDC, OAuth2, SAML): register and disable.',
  '/manage/filters': 'Content filter rules: keywords and patterns that warn, block or send to review.',
  '/manage/security': 'Login lockout, password policy and SSO account linking.',
  '/manage/audit': 'Every administrative and remote action, with filters and CSV or JSON export.',
  '/manage/compliance': 'Compliance reports, the security score and saved reports.',
};

export default function ManageIndex() {
  return (
    <ManagePage title="Administration">
      <ul class="stat-list">
        {MANAGE_SECTIONS.map((s) => (
          <li key={s.path} class="panel">
            <a href={s.path}>{s.title}</a>
            <p class="muted">{WHAT[s.path]}</p>
          </li>
        ))}
      </ul>
    </ManagePage>
  );
}
