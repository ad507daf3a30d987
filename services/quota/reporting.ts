// The reporting rows: daily_usage, the session totals and tenants.total_tokens_used. They guard
// nothing, so their increments are merged in memory per (tenant, day, tool, host), per session and
// per tenant, and written every FLUSH_INTERVAL_MS (flush() forces it), after the settles queued
// before them. The message rows of proxied calls (services/usage/remote-messages.ts) are written
// after this flush and add none of these figures again.
//
// Failure: a report that cannot be written is dropped and logged with its row count (quota
// accounting is the settles', not these rows').
import type { RawSql } from '../../db/client.ts';
import type { DailyUsageDelta, SessionTotalsDelta, UserPeriods } from '../../db/repositories/quota-usage.ts';
import { ingestRepository } from '../../db/repositories/usage/ingest.ts';
import {
  errorSummary,
  type QuotaCore,
  type QuotaSubject,
  type RecordedUsage,
  type UsageContext,
} from './types.ts';

const FLUSH_INTERVAL_MS = 50;

/** `beforeFlush` writes the settles queued so far (a report never runs ahead of its settles). */
export function reportingRows(core: QuotaCore, beforeFlush: () => Promise<void>) {
  const { deps, repo } = core;
  const inTransaction = !core.pg;
  const dailyUsage = new Map<string, DailyUsageDelta>();
  const sessionTotals = new Map<string, SessionTotalsDelta>();
  /** tenants.total_tokens_used increments per tenant. */
  const tenantTokens = new Map<number, number>();
  let reportTimer: NodeJS.Timeout | undefined;
  let reporting: Promise<void> | undefined;
  /** Reporting rows taken by the write in progress (for pending()). */
  let reportingRows = 0;

  function scheduleReport() {
    if (reportTimer !== undefined) return;
    reportTimer = setTimeout(() => {
      reportTimer = undefined;
      void flush();
    }, FLUSH_INTERVAL_MS).unref();
  }

  function queueReport(
    subject: QuotaSubject,
    usage: RecordedUsage['usage'] | null,
    requests: number,
    ctx: UsageContext | undefined,
    p: UserPeriods,
  ) {
    if (!ctx) return;
    const tokens = usage?.totalTokens ?? 0;
    if (subject.tenantId !== null) {
      const key = `${subject.tenantId}\u0000${p.day}\u0000${ctx.toolName}\u0000${ctx.hostName}`;
      let d = dailyUsage.get(key);
      if (!d) {
        d = {
          tenantId: subject.tenantId,
          date: p.day,
          toolName: ctx.toolName,
          hostName: ctx.hostName,
          tokens: 0,
          inputTokens: 0,
          outputTokens: 0,
          cacheTokens: 0,
          estimatedTokens: 0,
          requests: 0,
          models: [],
        };
        dailyUsage.set(key, d);
      }
      d.tokens += tokens;
      d.inputTokens += usage?.inputTokens ?? 0;
      d.outputTokens += usage?.outputTokens ?? 0;
      d.cacheTokens += usage?.cacheReadTokens ?? 0;
      if (usage?.estimated) d.estimatedTokens += tokens;
      d.requests += requests;
      if (usage?.model && !d.models.includes(usage.model)) d.models.push(usage.model);
      if (tokens !== 0)
        tenantTokens.set(subject.tenantId, (tenantTokens.get(subject.tenantId) ?? 0) + tokens);
    }
    if (ctx.sessionId) {
      let s = sessionTotals.get(ctx.sessionId);
      if (!s) {
        s = { sessionId: ctx.sessionId, tokens: 0, inputTokens: 0, outputTokens: 0, requests: 0 };
        sessionTotals.set(ctx.sessionId, s);
      }
      s.tokens += tokens;
      s.inputTokens += usage?.inputTokens ?? 0;
      s.outputTokens += usage?.outputTokens ?? 0;
      s.requests += requests;
    }
    scheduleReport();
  }

  /** Writes the merged reporting rows now (and waits for queued settles). */
  async function flush(): Promise<void> {
    await beforeFlush();
    while (reporting) await reporting;
    if (dailyUsage.size === 0 && sessionTotals.size === 0 && tenantTokens.size === 0) return;
    const daily = [...dailyUsage.values()];
    const sessions = [...sessionTotals.values()];
    const tenants = [...tenantTokens.entries()].sort(([a], [b]) => a - b);
    dailyUsage.clear();
    sessionTotals.clear();
    tenantTokens.clear();
    const at = deps.now();
    const write = async (db: RawSql) => {
      for (const d of daily) await repo.addDailyUsage(d, db);
      for (const s of sessions) await repo.addSessionTotals(s, at, db);
      const totals = ingestRepository(db);
      for (const [tenantId, tokens] of tenants) await totals.addTenantTokens({ tenantId, tokens });
    };
    reportingRows = daily.length + sessions.length + tenants.length;
    reporting = (
      inTransaction ? deps.database.transaction(({ sql }) => write(sql)) : write(deps.database.sql)
    ).catch((error) =>
      deps.logger?.error(
        { err: errorSummary(error), rows: daily.length + sessions.length + tenants.length },
        'quota: usage report rows could not be written',
      ),
    );
    try {
      await reporting;
    } finally {
      reporting = undefined;
      reportingRows = 0;
    }
  }

  return {
    queueReport,
    flush,
    /** Merged rows not written yet (queued, or in the write in progress). */
    pendingRows(): number {
      return dailyUsage.size + sessionTotals.size + tenantTokens.size + reportingRows;
    },
    /** Shutdown: no timer-driven report any more (flush() still writes). */
    stopTimer() {
      if (reportTimer !== undefined) clearTimeout(reportTimer);
      reportTimer = undefined;
    },
  };
}
