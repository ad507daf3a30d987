// Compliance reports (issue 11 item 4; spec document 2 "Compliance (admin)"): builds a report of one
// type (domain/compliance/report-types.ts) over a period inside a read scope, renders it as JSON or
// formula-safe CSV (domain/csv.ts, as every export), and saves it (compliance_reports) so it can be
// listed and fetched again. Every report is {summary, rows}: the CSV is its rows.
import { randomUUID } from 'node:crypto';
import type { DatabaseHandle } from '../../db/client.ts';
import { complianceReportsRepository } from '../../db/repositories/compliance/reports.ts';
import { complianceSignalsRepository } from '../../db/repositories/compliance/signals.ts';
import { auditPatterns } from '../../domain/compliance/audit-patterns.ts';
import type { ReportType } from '../../domain/compliance/report-types.ts';
import { csvLine } from '../../domain/csv.ts';
import type { ReadScope } from '../../domain/tenant-scope.ts';
import { auditAnalysis } from './audit-analysis.ts';
import { retentionService } from './retention.ts';

type Row = Record<string, unknown>;
interface Built {
  summary: Record<string, unknown>;
  rows: Row[];
}

export interface GenerateInput {
  scope: ReadScope;
  /** The tenant the report is saved under (null: platform-wide). */
  tenantId: number | null;
  reportType: ReportType;
  periodStart: string;
  periodEnd: string;
  format: 'json' | 'csv';
  createdBy: number | null;
}

const DAY_MS = 86_400_000;
const SECURITY_SEVERITIES = new Set(['warning', 'error', 'critical', 'high']);

/** RFC 4180 CSV of `rows` (columns: the union of their keys, in first-seen order). */
export function rowsToCsv(rows: readonly Row[]): string {
  const columns: string[] = [];
  for (const r of rows) for (const k of Object.keys(r)) if (!columns.includes(k)) columns.push(k);
  const lines = [csvLine(columns)];
  for (const r of rows) lines.push(csvLine(columns.map((c) => r[c])));
  return `${lines.join('\r\n')}\r\n`;
}

export function complianceReports(deps: { database: DatabaseHandle; now: () => Date }) {
  const repo = complianceReportsRepository(deps.database);
  const signals = complianceSignalsRepository(deps.database);
  const analysis = auditAnalysis(deps);
  const retention = retentionService(deps);

  async function build(i: GenerateInput): Promise<Built> {
    const range = {
      from: new Date(`${i.periodStart}T00:00:00Z`),
      before: new Date(Date.parse(`${i.periodEnd}T00:00:00Z`) + DAY_MS),
    };
    switch (i.reportType) {
      case 'usage_summary': {
        const rows = await signals.usageByDay(i.scope, i.periodStart, i.periodEnd);
        const total = (k: 'tokens' | 'requests' | 'messages') => rows.reduce((s, r) => s + r[k], 0);
        return {
          summary: {
            days_with_usage: rows.length,
            total_tokens: total('tokens'),
            total_requests: total('requests'),
            total_messages: total('messages'),
            active_users: await signals.activeUsersInPeriod(i.scope, i.periodStart, i.periodEnd),
          },
          rows,
        };
      }
      case 'audit_activity': {
        const e = await analysis.events(i.scope, range);
        const p = auditPatterns(e.events);
        return {
          summary: {
            total_events: p.total_events,
            failed_events: p.failed_events,
            failure_rate: p.failure_rate,
            by_day: p.by_day,
            top_actors: p.top_actors,
            truncated: e.truncated,
          },
          rows: p.by_action,
        };
      }
      case 'access_review': {
        const users = await signals.users(i.scope);
        const e = await analysis.events(i.scope, range);
        const perUser = new Map<number, { events: number; failed: number }>();
        for (const ev of e.events) {
          if (ev.userId == null) continue;
          const c = perUser.get(ev.userId) ?? { events: 0, failed: 0 };
          c.events++;
          if (!ev.success) c.failed++;
          perUser.set(ev.userId, c);
        }
        const rows = users.map((u) => ({
          ...u,
          audit_events: perUser.get(u.user_id)?.events ?? 0,
          failed_events: perUser.get(u.user_id)?.failed ?? 0,
        }));
        const admins = users.filter((u) => ['platform_admin', 'tenant_admin', 'admin'].includes(u.role));
        return {
          summary: {
            users: users.length,
            active_users: users.filter((u) => u.is_active).length,
            administrators: admins.length,
            never_logged_in: users.filter((u) => u.last_login_at == null).length,
          },
          rows,
        };
      }
      case 'security_events': {
        const e = await analysis.events(i.scope, range);
        const rows = e.events
          .filter(
            (ev) => !ev.success || SECURITY_SEVERITIES.has(ev.severity ?? '') || ev.action === 'LOGIN_LOCKED',
          )
          .map((ev) => ({
            timestamp: ev.timestamp.toISOString(),
            user_id: ev.userId,
            username: ev.username,
            action: ev.action,
            severity: ev.severity ?? null,
            success: ev.success,
          }));
        const byAction: Record<string, number> = {};
        for (const r of rows) byAction[r.action] = (byAction[r.action] ?? 0) + 1;
        return {
          summary: { security_events: rows.length, by_action: byAction, truncated: e.truncated },
          rows,
        };
      }
      case 'data_retention': {
        const tenantIds =
          i.scope.kind === 'tenant' ? [i.scope.tenantId] : i.scope.kind === 'none' ? [] : undefined;
        const dry = await retention.cleanup({ tenantIds, dryRun: true });
        const rows = dry.tenants.flatMap((t) =>
          Object.entries(t.tables).map(([table, expired]) => ({
            tenant_id: t.tenant_id,
            table,
            audit_log_retention_days: t.audit_log_retention_days,
            data_retention_days: t.data_retention_days,
            rows_past_retention: expired,
          })),
        );
        return {
          summary: { tenants: dry.tenants.length, rows_past_retention: dry.total, tables: dry.tables },
          rows,
        };
      }
    }
  }

  return {
    async generate(i: GenerateInput) {
      const built = await build(i);
      const createdAt = deps.now();
      const reportId = `rpt_${randomUUID().replaceAll('-', '')}`;
      const meta = {
        report_id: reportId,
        report_type: i.reportType,
        tenant_id: i.tenantId,
        period_start: i.periodStart,
        period_end: i.periodEnd,
        format: i.format,
        created_by: i.createdBy,
        created_at: createdAt.toISOString(),
      };
      const content =
        i.format === 'csv'
          ? rowsToCsv(built.rows)
          : JSON.stringify({ ...meta, summary: built.summary, rows: built.rows });
      await repo.insert({
        reportId,
        tenantId: i.tenantId,
        reportType: i.reportType,
        periodStart: i.periodStart,
        periodEnd: i.periodEnd,
        format: i.format,
        createdBy: i.createdBy,
        createdAt,
        summary: built.summary,
        content,
      });
      return { meta, summary: built.summary, rows: built.rows, content };
    },
    list: repo.list,
    get: repo.get,
  };
}
