// The security score (issue 11 item 4), pure. A documented formula over concrete signals, each turned
// into a penalty in [0, 1] and weighted; the score is 100 * (1 - sum(weight * penalty)), rounded.
//
//   lockouts        (0.25)  min(1, LOGIN_LOCKED events in the window / max(1, active users))
//   admin_ratio     (0.20)  clamp((administrators / active users - 0.10) / 0.40, 0, 1): up to 10 % admins
//                           costs nothing, 50 % or more costs the full weight
//   sso_adoption    (0.20)  1 - (active users with an SSO identity / active users); 0 with no users
//   stale_keys      (0.15)  active provider keys not updated for STALE_KEY_DAYS / active keys; 0 with none
//   proxy_refusals  (0.20)  min(1, 5 * refused proxy calls / (refused + proxy tokens issued)): a 20 %
//                           refusal rate costs the full weight
// Weights sum to 1. Every component is returned with its value, penalty and weight.
export const SECURITY_WEIGHTS = {
  lockouts: 0.25,
  admin_ratio: 0.2,
  sso_adoption: 0.2,
  stale_keys: 0.15,
  proxy_refusals: 0.2,
} as const;

export const STALE_KEY_DAYS = 90;
export const SECURITY_WINDOW_DAYS = 30;

export interface SecuritySignals {
  activeUsers: number;
  administrators: number;
  ssoUsers: number;
  lockouts: number;
  activeKeys: number;
  staleKeys: number;
  proxyRefusals: number;
  proxyTokensIssued: number;
}

export interface SecurityComponent {
  name: keyof typeof SECURITY_WEIGHTS;
  value: number;
  penalty: number;
  weight: number;
}

const clamp01 = (v: number) => Math.min(1, Math.max(0, v));
const round = (v: number) => Math.round(v * 10_000) / 10_000;

export function securityScore(s: SecuritySignals): { score: number; components: SecurityComponent[] } {
  const users = Math.max(1, s.activeUsers);
  const adminRatio = s.activeUsers > 0 ? s.administrators / s.activeUsers : 0;
  const ssoShare = s.activeUsers > 0 ? s.ssoUsers / s.activeUsers : 1;
  const staleShare = s.activeKeys > 0 ? s.staleKeys / s.activeKeys : 0;
  const proxyCalls = s.proxyRefusals + s.proxyTokensIssued;
  const refusalRate = proxyCalls > 0 ? s.proxyRefusals / proxyCalls : 0;
  const parts: [SecurityComponent['name'], number, number][] = [
    ['lockouts', s.lockouts, clamp01(s.lockouts / users)],
    ['admin_ratio', adminRatio, clamp01((adminRatio - 0.1) / 0.4)],
    ['sso_adoption', ssoShare, clamp01(1 - ssoShare)],
    ['stale_keys', staleShare, clamp01(staleShare)],
    ['proxy_refusals', refusalRate, clamp01(5 * refusalRate)],
  ];
  const components = parts.map(([name, value, penalty]) => ({
    name,
    value: round(value),
    penalty: round(penalty),
    weight: SECURITY_WEIGHTS[name],
  }));
  const lost = components.reduce((sum, c) => sum + c.weight * c.penalty, 0);
  return { score: Math.round(100 * (1 - lost)), components };
}
