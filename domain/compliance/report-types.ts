// The compliance report types (spec document 2, "Compliance (admin)"; issue 11 item 4): the names a
// client may ask for and what each report contains. Pure data; services/compliance/reports.ts builds them.
export const REPORT_TYPES = [
  {
    type: 'usage_summary',
    name: 'Usage summary',
    description: 'Tokens, requests, messages and active users per day over the period, with totals.',
  },
  {
    type: 'audit_activity',
    name: 'Audit activity',
    description: 'Audit events over the period by action, by actor and by day, with failure counts.',
  },
  {
    type: 'access_review',
    name: 'Access review',
    description: 'Every user in scope with role, active state, last login and audit events in the period.',
  },
  {
    type: 'security_events',
    name: 'Security events',
    description:
      'Failed or warning/critical audit events in the period (failed logins, lockouts, proxy refusals, denials).',
  },
  {
    type: 'data_retention',
    name: 'Data retention',
    description:
      'Retention rules per tenant and the rows that the next cleanup would remove (a dry-run count per table).',
  },
] as const;

export type ReportType = (typeof REPORT_TYPES)[number]['type'];
export const REPORT_TYPE_NAMES = REPORT_TYPES.map((r) => r.type) as [ReportType, ...ReportType[]];

/** Longest period one report may cover (days, inclusive). */
export const MAX_REPORT_PERIOD_DAYS = 366;
