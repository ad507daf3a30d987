// What an OTLP export from a CLI adds (issue 29 item 2), attributed to its sender (ingest-caller.ts):
//
// - logs: each model call (domain/otlp/usage-events.ts) becomes one assistant row of daily_messages,
//   message_source `otel`, tool_name the CLI's, message_id `otel-<digest of the event>`, through the
//   ordinary ingest (services/usage/ingest.ts): the natural key makes a retried export count once, and
//   the call counts towards statistics and quotas like uploaded usage. A call the model proxy already
//   recorded through a gateway key (a `gateway` row of the same user, model, input and output tokens
//   within DEDUP_WINDOW_MS) is skipped: one call, counted once.
// - metrics: each productivity point (domain/otlp/productivity.ts) adds its increment to the user's
//   otel_productivity_daily row of the point's day and CLI; the series' last point is kept so a retry
//   adds nothing and a cumulative series adds only its growth. One transaction per export.
import type { DatabaseHandle } from '../../db/client.ts';
import { otelRepository } from '../../db/repositories/otel.ts';
import {
  emptyFigures,
  type ProductivityFigures,
  pointIncrement,
  productivityPoints,
} from '../../domain/otlp/productivity.ts';
import { callsOfLogs, type OtelCall } from '../../domain/otlp/usage-events.ts';
import { type IngestService, ingestService } from '../usage/ingest.ts';
import { remoteMessagesFor } from '../usage/remote-messages.ts';
import type { IngestCaller } from './ingest-caller.ts';

/** A CLI's event and the proxy's row of the same call are this close in time (either way). */
export const DEDUP_WINDOW_MS = 10 * 60_000;
export const OTEL_MESSAGE_SOURCE = 'otel';
const DEFAULT_HOST = 'otel';

const dayOf = (d: Date) => d.toISOString().slice(0, 10);

function callRow(call: OtelCall, caller: IngestCaller) {
  const entry: Record<string, unknown> = {
    cache_read_tokens: call.cacheReadTokens,
    cache_write_tokens: call.cacheWriteTokens,
  };
  if (call.costUsd !== null) entry.cost_usd = call.costUsd;
  if (call.durationMs !== null) entry.duration_ms = call.durationMs;
  return {
    date: dayOf(call.at),
    toolName: call.tool,
    hostName: call.hostName ?? DEFAULT_HOST,
    messageId: `otel-${call.identity}`,
    parentId: null,
    role: 'assistant' as const,
    content: null,
    fullEntry: JSON.stringify(entry),
    tokensUsed: call.inputTokens + call.outputTokens,
    inputTokens: call.inputTokens,
    outputTokens: call.outputTokens,
    model: call.model,
    timestamp: call.at,
    senderId: null,
    senderName: caller.username,
    messageSource: OTEL_MESSAGE_SOURCE,
    conversationId: call.sessionId,
    agentSessionId: null,
    projectPath: null,
    owner: { userId: caller.userId, tenantId: caller.tenantId },
  };
}

export interface OtlpOutcome {
  /** Calls newly counted / already stored (a retry) / already counted by the proxy. */
  calls?: { stored: number; duplicates: number; viaGateway: number };
  /** Metric points taken / skipped (retried or older than the series' last). */
  points?: { taken: number; skipped: number };
}

export function otlpIngestService(deps: { database: DatabaseHandle; now: () => Date }) {
  const ingest: IngestService = ingestService(deps as Parameters<typeof ingestService>[0]);
  const repo = otelRepository(deps.database);

  return {
    async logs(request: Record<string, unknown>, caller: IngestCaller): Promise<OtlpOutcome> {
      const calls = callsOfLogs(request, deps.now());
      // The proxy queues its `gateway` rows (services/usage/remote-messages.ts, written every flush
      // interval): write this instance's queue first, or a CLI's event that comes in before the flush
      // finds no twin and the call is counted twice. (A call proxied by another API instance is
      // still only as visible as that instance's last flush.)
      if (calls.length) await remoteMessagesFor(deps).flush();
      const rows = [];
      let viaGateway = 0;
      for (const call of calls) {
        const twin = await repo.hasGatewayTwin({
          userId: caller.userId,
          model: call.model,
          inputTokens: call.inputTokens,
          outputTokens: call.outputTokens,
          from: new Date(call.at.getTime() - DEDUP_WINDOW_MS),
          to: new Date(call.at.getTime() + DEDUP_WINDOW_MS),
        });
        if (twin) viaGateway++;
        else rows.push(callRow(call, caller));
      }
      const outcome = rows.length ? await ingest.ingestMessages(rows) : { inserted: 0, duplicates: 0 };
      return { calls: { stored: outcome.inserted, duplicates: outcome.duplicates, viaGateway } };
    },

    async metrics(request: Record<string, unknown>, caller: IngestCaller): Promise<OtlpOutcome> {
      const points = productivityPoints(request).sort(
        (a, b) =>
          a.timeNanos.length - b.timeNanos.length ||
          (a.timeNanos < b.timeNanos ? -1 : a.timeNanos > b.timeNanos ? 1 : 0),
      );
      let taken = 0;
      await deps.database.transaction(async (tx) => {
        const txRepo = otelRepository({ db: tx.db, t: deps.database.t });
        const days = new Map<string, { date: string; toolName: string; figures: ProductivityFigures }>();
        for (const point of points) {
          const last = await txRepo.series(caller.userId, point.seriesKey);
          const increment = pointIncrement(point, last);
          if (increment === null) continue;
          taken++;
          await txRepo.saveSeries({
            userId: caller.userId,
            tenantId: caller.tenantId,
            seriesKey: point.seriesKey,
            startTimeNanos: point.startTimeNanos,
            timeNanos: point.timeNanos,
            valueMilli: point.valueMilli,
            at: deps.now(),
          });
          const date = dayOf(point.at);
          const key = `${date}\u0000${point.tool}`;
          const day = days.get(key) ?? { date, toolName: point.tool, figures: emptyFigures() };
          // Counts are whole; active time is kept in milliseconds.
          day.figures[point.figure] += point.figure === 'activeMs' ? increment : Math.round(increment / 1000);
          days.set(key, day);
        }
        for (const day of days.values())
          await txRepo.addFigures(
            { date: day.date, tenantId: caller.tenantId, userId: caller.userId, toolName: day.toolName },
            day.figures,
          );
      });
      return { points: { taken, skipped: points.length - taken } };
    },
  };
}
