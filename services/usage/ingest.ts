// Message ingestion (issue 10 item 1): stores uploaded messages in daily_messages and brings every
// statistic up to date in the same transaction, incrementally.
//
// Per chunk of CHUNK_ROWS valid rows, one transaction:
//   1. the senders are resolved to users: sender_id, then sender_name, as a tool account
//      (user_tool_accounts.tool_account), then sender_name as a username; the message's tenant is its
//      user's, or DEFAULT_TENANT_ID (1) for unknown senders and users outside any tenant;
//   2. INSERT ... ON CONFLICT DO NOTHING RETURNING the natural keys: only rows really inserted go on,
//      so a message uploaded twice (or twice in one request) is counted once;
//   3. the inserted rows are aggregated in memory (domain/usage/ingest-aggregate.ts) and each
//      aggregate key gets one UPSERT: daily_stats, hourly_stats, daily_usage, usage_summary,
//      user_daily_stats, tenant_usage, the agent_sessions totals, tenants.total_tokens_used, and the
//      user's quota_usage rows (daily and monthly), so uploaded usage counts towards quotas like any
//      other usage. daily_usage, tenant_usage and quota_usage are written with the shared accounting's
//      statements (db/repositories/quota-usage.ts), the same the model proxy's settles use.
// Usage reports (/api/upload/usage, a batch's `usage` rows) carry no sender and land in
// DEFAULT_TENANT_ID, or in the uploader's tenant when a personal upload token sent them. A report states a day's figures for a tool and host: the newest one replaces the
// stored one (usage_uploads) and only the difference is added to daily_usage, usage_summary,
// tenant_usage and tenants.total_tokens_used, so uploading the same report again changes nothing.
// A report never adds requests (rule 3), and counts only while its day, tool and host has no message
// (domain/usage/counting.ts): a report for a day with messages is stored and adds nothing, and the
// first message of a day whose report counted takes the report's figures back out. Both uploads take
// the day's lock (usage-uploads.ts lockDays) before deciding, so concurrent uploads agree.
// A chunk is all or nothing. A failing chunk stops the request (500); the chunks before it stay
// committed, and uploading the same rows again is safe (they are skipped as duplicates).
//
// Remote work (services/usage/remote-messages.ts) comes through the same path with two options:
//   - a row may carry its `owner` (user and tenant), known from the remote session: no sender lookup;
//   - `accounting: 'already-settled'`: the tokens and requests were counted live by the quota service
//     (services/quota.ts settle / recordUsage), which writes daily_usage, tenant_usage, quota_usage,
//     the agent_sessions token and request totals and tenants.total_tokens_used. Such rows add only
//     what is derived from messages: daily_messages, daily_stats, hourly_stats, usage_summary,
//     user_daily_stats and agent_sessions.message_count. Nothing is counted twice.
import type { DatabaseHandle, RawSql } from '../../db/client.ts';
import { quotaUsageRepository } from '../../db/repositories/quota-usage.ts';
import { ingestRepository, type SenderOwner } from '../../db/repositories/usage/ingest.ts';
import { type StoredReport, usageUploadsRepository } from '../../db/repositories/usage/usage-uploads.ts';
import { DEFAULT_TENANT_ID } from '../../domain/tenants.ts';
import { countedReport, type UsageDay, usageDayKey, usageDaysOf } from '../../domain/usage/counting.ts';
import { type AttributedMessage, aggregateMessages } from '../../domain/usage/ingest-aggregate.ts';
import { type MessageRow, messageKey, modelsOf, type UsageRow } from '../../domain/usage/ingest-rows.ts';
import { isNoChange, type UsageFigures, usageDifference } from '../../domain/usage/usage-figures.ts';
import { contentFilterFor } from '../content-filter.ts';
import { displayNames, withSenderName } from '../orgsync/display-names.ts';

/** Valid rows per transaction. */
export const CHUNK_ROWS = 2_000;

/** A message to store; `owner` when the caller knows its user and tenant (else resolved from the sender). */
export type IngestMessage = MessageRow & { owner?: { userId: number; tenantId: number } };

export interface IngestOptions {
  /**
   * 'count' (default): the rows' tokens and requests are new usage and are added everywhere.
   * 'already-settled': the quota service already counted them (see the header); only the
   * message-derived tables are written.
   */
  accounting?: 'count' | 'already-settled';
}

export interface IngestOutcome {
  /** Rows newly stored (usage reports: stored and changing a figure). */
  inserted: number;
  /** Valid rows that were already stored (or repeated in the request): nothing changed for them. */
  duplicates: number;
}

/**
 * The attributed copy of a row whose owner the caller knows (remote work: every proxied call's row),
 * built as one object literal: a spread of the 19-field row into a literal cost several microseconds
 * per row in V8, on the thread that serves the model proxy (bench/proxy/message-rows.ts).
 */
function ownedMessage(m: MessageRow, userId: number, tenantId: number): AttributedMessage {
  return {
    date: m.date,
    toolName: m.toolName,
    hostName: m.hostName,
    messageId: m.messageId,
    parentId: m.parentId,
    role: m.role,
    content: m.content,
    fullEntry: m.fullEntry,
    tokensUsed: m.tokensUsed,
    inputTokens: m.inputTokens,
    outputTokens: m.outputTokens,
    model: m.model,
    timestamp: m.timestamp,
    senderId: m.senderId,
    senderName: m.senderName,
    messageSource: m.messageSource,
    conversationId: m.conversationId,
    agentSessionId: m.agentSessionId,
    projectPath: m.projectPath,
    userId,
    tenantId,
  };
}

export function ingestService(deps: {
  database: DatabaseHandle;
  now: () => Date;
  /** With the data directory, chat-platform senders without a name get the org-sync cached one. */
  settings?: { dataDir: string };
}) {
  const platformNames = deps.settings ? displayNames(deps.settings.dataDir) : null;
  async function resolveOwners(repo: ReturnType<typeof ingestRepository>, rows: readonly IngestMessage[]) {
    const accounts = new Set<string>();
    const names = new Set<string>();
    for (const m of rows) {
      if (m.owner !== undefined) continue;
      if (m.senderId !== null) accounts.add(m.senderId);
      if (m.senderName !== null) {
        accounts.add(m.senderName);
        names.add(m.senderName);
      }
    }
    const [byAccount, byName] = await Promise.all([
      accounts.size ? repo.ownersOfToolAccounts([...accounts]) : new Map<string, SenderOwner>(),
      names.size ? repo.usersByName([...names]) : new Map<string, SenderOwner>(),
    ]);
    return (m: IngestMessage): SenderOwner | undefined =>
      m.owner ??
      (m.senderId !== null ? byAccount.get(m.senderId) : undefined) ??
      (m.senderName !== null ? (byAccount.get(m.senderName) ?? byName.get(m.senderName)) : undefined);
  }

  async function ingestChunk(sql: RawSql, rows: readonly IngestMessage[], settled: boolean): Promise<number> {
    const repo = ingestRepository(sql);
    const quota = quotaUsageRepository({ ...deps.database, sql });
    const ownerOf = await resolveOwners(repo, rows);
    // Display names of chat-platform senders (services/orgsync/display-names.ts): filled after the
    // owner lookup, so a display name never attributes a message; one refresh per chunk, O(1) per row.
    platformNames?.refresh();
    const byKey = new Map<string, AttributedMessage>();
    const attributed = rows.map((m) => {
      const src = platformNames ? withSenderName(platformNames, m) : m;
      let a: AttributedMessage;
      if (m.owner !== undefined) a = ownedMessage(src, m.owner.userId, m.owner.tenantId);
      else {
        const owner = ownerOf(m);
        a = { ...src, userId: owner?.userId ?? null, tenantId: owner?.tenantId ?? DEFAULT_TENANT_ID };
      }
      const key = messageKey(m);
      if (!byKey.has(key)) byKey.set(key, a);
      return a;
    });
    // The days of the chunk are locked before the insert; a day's reports, if any, were counted unless
    // the day already had messages (domain/usage/counting.ts).
    const uploads = usageUploadsRepository(sql);
    const days = usageDaysOf(rows);
    await uploads.lockDays(days);
    const reports = await uploads.reportsOn(days);
    const hadMessages = reports.length
      ? await repo.daysWithMessages(usageDaysOf(reports))
      : new Set<string>();
    const keys = await repo.insertMessages(attributed);
    const inserted = keys.map(([date, toolName, messageId, hostName]) => {
      const m = byKey.get(messageKey({ date, toolName, messageId, hostName }));
      if (m === undefined) throw new Error('an inserted message is not in the chunk');
      return m;
    });
    if (inserted.length === 0) return 0;
    // Content filter (tenants with content_filter_enabled): matching rows are flagged, never dropped.
    await contentFilterFor(deps).screenUploaded(sql, inserted);

    const agg = aggregateMessages(inserted);
    const at = deps.now();
    const newDays = new Set(inserted.map(usageDayKey));
    for (const r of reports)
      if (newDays.has(usageDayKey(r)) && !hadMessages.has(usageDayKey(r))) await retireReport(sql, r);
    await repo.addDailyStats(agg.dailyStats);
    await repo.addHourlyStats(agg.hourlyStats);
    if (settled) {
      // The quota service counted the tokens and requests (daily_usage first, so usage_summary's
      // days_count sees the day): only the message-derived rows and the sessions' message counts.
      for (const d of agg.usageSummary) await repo.addUsageSummary(d);
      for (const d of agg.userDays) await repo.addUserDailyStats(d);
      for (const d of agg.sessions)
        await repo.addSessionTotals({ ...d, tokens: 0, inputTokens: 0, outputTokens: 0, requests: 0 }, at);
      return inserted.length;
    }
    for (const d of agg.dailyUsage)
      await quota.addDailyUsage(
        {
          tenantId: d.tenantId,
          date: d.date,
          toolName: d.toolName,
          hostName: d.hostName,
          tokens: d.tokens,
          inputTokens: d.inputTokens,
          outputTokens: d.outputTokens,
          cacheTokens: 0,
          estimatedTokens: 0,
          requests: d.requests,
          models: d.models,
        },
        sql,
      );
    for (const d of agg.usageSummary) await repo.addUsageSummary(d);
    for (const d of agg.userDays) {
      await repo.addUserDailyStats(d);
      const periods = { day: d.date, month: `${d.date.slice(0, 7)}-01` };
      const firstToday = await quota.ensureUserRows(d.userId, periods, at, sql);
      // The user's first usage of that day makes them one of the tenant's active users.
      if (firstToday) await quota.ensureTenantRow(d.tenantId, d.date, true, sql);
      await quota.settleUser(
        d.userId,
        periods,
        { tokens: d.tokens, requests: d.requests, releaseTokens: 0, releaseRequests: 0 },
        at,
        sql,
      );
    }
    for (const d of agg.tenantDays) {
      await quota.ensureTenantRow(d.tenantId, d.date, false, sql);
      await quota.settleTenant(
        d.tenantId,
        d.date,
        { tokens: d.tokens, requests: d.requests, releaseTokens: 0, releaseRequests: 0 },
        sql,
      );
    }
    for (const d of agg.sessions) await repo.addSessionTotals(d, at);
    for (const d of agg.tenantTotals) await repo.addTenantTokens(d);
    await repo.restoreDurableCommit();
    return inserted.length;
  }

  /**
   * Adds what a report counts (`d`, possibly negative) to daily_usage, usage_summary, tenant_usage and
   * tenants.total_tokens_used; never requests (rule 3).
   */
  async function addReportFigures(
    sql: RawSql,
    tenantId: number,
    day: UsageDay,
    d: UsageFigures,
    models: string[],
  ): Promise<void> {
    const repo = ingestRepository(sql);
    const quota = quotaUsageRepository({ ...deps.database, sql });
    await quota.addDailyUsage(
      {
        tenantId,
        date: day.date,
        toolName: day.toolName,
        hostName: day.hostName,
        tokens: d.tokensUsed,
        inputTokens: d.inputTokens,
        outputTokens: d.outputTokens,
        cacheTokens: d.cacheTokens,
        estimatedTokens: 0,
        requests: 0,
        models,
      },
      sql,
    );
    await repo.addUsageSummary({
      toolName: day.toolName,
      hostName: day.hostName,
      firstDate: day.date,
      lastDate: day.date,
      tokens: d.tokensUsed,
      inputTokens: d.inputTokens,
      outputTokens: d.outputTokens,
      requests: 0,
      messages: 0,
    });
    await quota.ensureTenantRow(tenantId, day.date, false, sql);
    await quota.settleTenant(
      tenantId,
      day.date,
      { tokens: d.tokensUsed, requests: 0, releaseTokens: 0, releaseRequests: 0 },
      sql,
    );
    await repo.addTenantTokens({ tenantId, tokens: d.tokensUsed });
  }

  /** The first messages of a day arrived: its report, counted until now, is taken back out. */
  async function retireReport(sql: RawSql, r: StoredReport): Promise<void> {
    const d = usageDifference(countedReport(r.figures, false), countedReport(r.figures, true));
    if (!isNoChange(d)) await addReportFigures(sql, r.tenantId, r, d, []);
  }

  /** Returns how many reports changed (the others repeated the stored report). */
  async function ingestUsageChunk(sql: RawSql, rows: readonly UsageRow[], tenantId: number): Promise<number> {
    const repo = ingestRepository(sql);
    const uploads = usageUploadsRepository(sql);
    const at = deps.now();
    const days = usageDaysOf(rows);
    await uploads.lockDays(days);
    const withMessages = await repo.daysWithMessages(days);
    let changed = 0;
    for (const row of rows) {
      const { created, before, modelsBefore } = await uploads.replace(tenantId, row, at);
      const had = modelsOf(modelsBefore);
      const newModels = modelsOf(row.modelsUsed).filter((m) => !had.includes(m));
      if (!created && isNoChange(usageDifference(before, row)) && newModels.length === 0) continue;
      changed += 1;
      // A day with messages is counted from them: its report is stored and adds nothing.
      if (withMessages.has(usageDayKey(row))) continue;
      // A first report always writes its daily_usage row (zeros included).
      const d = usageDifference(countedReport(before, false), countedReport(row, false));
      await addReportFigures(sql, tenantId, row, d, modelsOf(row.modelsUsed));
    }
    await repo.restoreDurableCommit();
    return changed;
  }

  return {
    /**
     * Stores usage reports in chunks of CHUNK_ROWS, one transaction each, in `owner.tenantId` (an upload
     * with a personal token: its owner's tenant), else DEFAULT_TENANT_ID.
     */
    async ingestUsage(rows: readonly UsageRow[], owner?: { tenantId: number }): Promise<IngestOutcome> {
      const tenantId = owner?.tenantId ?? DEFAULT_TENANT_ID;
      let inserted = 0;
      for (let i = 0; i < rows.length; i += CHUNK_ROWS) {
        const chunk = rows.slice(i, i + CHUNK_ROWS);
        inserted += await deps.database.transaction(({ sql }) => ingestUsageChunk(sql, chunk, tenantId));
      }
      return { inserted, duplicates: rows.length - inserted };
    },

    /** Stores valid message rows in chunks of CHUNK_ROWS, one transaction each (see IngestOptions). */
    async ingestMessages(
      rows: readonly IngestMessage[],
      options: IngestOptions = {},
    ): Promise<IngestOutcome> {
      const settled = options.accounting === 'already-settled';
      let inserted = 0;
      for (let i = 0; i < rows.length; i += CHUNK_ROWS) {
        const chunk = rows.slice(i, i + CHUNK_ROWS);
        inserted += await deps.database.transaction(({ sql }) => ingestChunk(sql, chunk, settled));
      }
      return { inserted, duplicates: rows.length - inserted };
    },
  };
}

export type IngestService = ReturnType<typeof ingestService>;
