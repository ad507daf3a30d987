// Aggregation of newly stored messages into the statistics deltas, pure. The ingest service inserts
// messages with ON CONFLICT DO NOTHING and passes only the rows really inserted here, so a message is
// counted exactly once however often it is uploaded. Each map holds one delta per key of its table,
// and each delta becomes one UPSERT. Request counting follows spec rule 3: one request is one
// assistant message.
import { isRequest } from './counting.ts';
import type { MessageRow } from './ingest-rows.ts';

/** A stored message with the user and tenant it was attributed to. */
export interface AttributedMessage extends MessageRow {
  userId: number | null;
  tenantId: number;
}

export interface Totals {
  tokens: number;
  inputTokens: number;
  outputTokens: number;
  messages: number;
  requests: number;
}

export interface DailyStatsDelta extends Totals {
  date: string;
  toolName: string;
  hostName: string;
  senderName: string;
}
export interface HourlyStatsDelta extends Totals {
  date: string;
  hour: number;
  toolName: string;
  hostName: string;
}
export interface DailyUsageAggregate extends Totals {
  tenantId: number;
  date: string;
  toolName: string;
  hostName: string;
  models: string[];
}
export interface UsageSummaryDelta extends Totals {
  toolName: string;
  hostName: string;
  firstDate: string;
  lastDate: string;
}
export interface UserDayDelta extends Totals {
  userId: number;
  tenantId: number;
  date: string;
}
export interface TenantDayDelta extends Totals {
  tenantId: number;
  date: string;
}
export interface SessionDelta extends Totals {
  sessionId: string;
}
export interface TenantTotalDelta {
  tenantId: number;
  tokens: number;
}

export interface IngestAggregates {
  dailyStats: DailyStatsDelta[];
  hourlyStats: HourlyStatsDelta[];
  dailyUsage: DailyUsageAggregate[];
  usageSummary: UsageSummaryDelta[];
  /** Known users only (user_daily_stats and quota_usage). */
  userDays: UserDayDelta[];
  /** Every tenant's day, known senders or not (tenant_usage). */
  tenantDays: TenantDayDelta[];
  sessions: SessionDelta[];
  tenantTotals: TenantTotalDelta[];
}

/** The hour bucket of a message: the UTC hour of its timestamp, 0 when it has none. */
export const hourOf = (m: Pick<MessageRow, 'timestamp'>): number => m.timestamp?.getUTCHours() ?? 0;

const zero = (): Totals => ({ tokens: 0, inputTokens: 0, outputTokens: 0, messages: 0, requests: 0 });

function add(t: Totals, m: AttributedMessage) {
  t.tokens += m.tokensUsed;
  t.inputTokens += m.inputTokens;
  t.outputTokens += m.outputTokens;
  t.messages += 1;
  if (isRequest(m.role)) t.requests += 1;
}

function bucket<T extends Totals>(map: Map<string, T>, key: string, make: () => Omit<T, keyof Totals>): T {
  let d = map.get(key);
  if (d === undefined) {
    d = { ...make(), ...zero() } as T;
    map.set(key, d);
  }
  return d;
}

const SEP = '\u0000';

/** Sorted by key, so concurrent transactions touch shared rows in one order (no deadlock cycle). */
const sorted = <T>(map: Map<string, T>): T[] =>
  [...map.entries()].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)).map(([, v]) => v);

export function aggregateMessages(messages: readonly AttributedMessage[]): IngestAggregates {
  const dailyStats = new Map<string, DailyStatsDelta>();
  const hourlyStats = new Map<string, HourlyStatsDelta>();
  const dailyUsage = new Map<string, DailyUsageAggregate>();
  const usageSummary = new Map<string, UsageSummaryDelta>();
  const userDays = new Map<string, UserDayDelta>();
  const tenantDays = new Map<string, TenantDayDelta>();
  const sessions = new Map<string, SessionDelta>();
  const tenantTotals = new Map<string, TenantTotalDelta>();

  for (const m of messages) {
    const { date, toolName, hostName, tenantId } = m;
    const senderName = m.senderName ?? '';
    // Keys as template strings (an array join per key cost ~1 us each, 8 keys a row: bench/proxy).
    const tenantKey = String(tenantId).padStart(10, '0');
    add(
      bucket(dailyStats, `${date}${SEP}${toolName}${SEP}${hostName}${SEP}${senderName}`, () => ({
        date,
        toolName,
        hostName,
        senderName,
      })),
      m,
    );
    const hour = hourOf(m);
    add(
      bucket(
        hourlyStats,
        `${date}${SEP}${hour < 10 ? '0' : ''}${hour}${SEP}${toolName}${SEP}${hostName}`,
        () => ({
          date,
          hour,
          toolName,
          hostName,
        }),
      ),
      m,
    );
    const du = bucket(dailyUsage, `${tenantKey}${SEP}${date}${SEP}${toolName}${SEP}${hostName}`, () => ({
      tenantId,
      date,
      toolName,
      hostName,
      models: [] as string[],
    }));
    add(du, m);
    if (m.model && !du.models.includes(m.model)) du.models.push(m.model);
    const us = bucket(usageSummary, `${toolName}${SEP}${hostName}`, () => ({
      toolName,
      hostName,
      firstDate: date,
      lastDate: date,
    }));
    add(us, m);
    if (date < us.firstDate) us.firstDate = date;
    if (date > us.lastDate) us.lastDate = date;
    if (m.userId !== null) {
      const userId = m.userId;
      add(
        bucket(userDays, `${String(userId).padStart(10, '0')}${SEP}${date}`, () => ({
          userId,
          tenantId,
          date,
        })),
        m,
      );
    }
    add(
      bucket(tenantDays, `${tenantKey}${SEP}${date}`, () => ({ tenantId, date })),
      m,
    );
    if (m.agentSessionId !== null) {
      const sessionId = m.agentSessionId;
      add(
        bucket(sessions, sessionId, () => ({ sessionId })),
        m,
      );
    }
    const tt = tenantTotals.get(tenantKey);
    if (tt) tt.tokens += m.tokensUsed;
    else tenantTotals.set(tenantKey, { tenantId, tokens: m.tokensUsed });
  }
  return {
    dailyStats: sorted(dailyStats),
    hourlyStats: sorted(hourlyStats),
    dailyUsage: sorted(dailyUsage),
    usageSummary: sorted(usageSummary),
    userDays: sorted(userDays),
    tenantDays: sorted(tenantDays),
    sessions: sorted(sessions),
    tenantTotals: sorted(tenantTotals),
  };
}
