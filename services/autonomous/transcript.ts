// The full transcript of a milestone's stable session line (spec document 2, "Autonomous
// development": GET .../milestones/:mid/session). Where it is recorded: each line is an agent_sessions
// row whose session_id is the line's stable id (services/autonomous/session-lines.ts), and the model
// proxy writes every call of that session as a daily_messages row with agent_session_id = that id
// (services/usage/remote-messages.ts; the metering line-usage.ts reads too). The transcript is those
// rows in the order they happened (timestamp, then storage order), paged
// (db/repositories/autonomous/transcripts.ts).
//
// Which line: the milestone's `session_line` (its row in autonomous_session_lines), else the
// milestone's own `session_id`. A milestone with neither (feedback, merge) has no line: 404.
import type { DatabaseHandle } from '../../db/client.ts';
import type { MilestoneRow } from '../../db/repositories/autonomous/milestones.ts';
import { type SessionLine, sessionLinesRepository } from '../../db/repositories/autonomous/session-lines.ts';
import { sessionTranscriptsRepository } from '../../db/repositories/autonomous/transcripts.ts';
import type { MessageView } from '../../db/repositories/usage/read-messages.ts';
import { isSessionLineName } from '../../domain/autonomous/session-lines.ts';
import { NotFoundError } from '../../domain/errors.ts';

export interface Transcript {
  line: string | null;
  session_id: string;
  provider_session_id: string | null;
  messages: MessageView[];
  total: number;
  limit: number;
  offset: number;
}

export const NO_SESSION_LINE = 'The milestone has no session line';

export async function milestoneTranscript(
  database: DatabaseHandle,
  milestone: MilestoneRow,
  page: { limit: number; offset: number },
): Promise<Transcript> {
  let line: string | null = null;
  let sessionId: string | null = null;
  let providerSessionId: string | null = null;
  if (milestone.sessionLine && isSessionLineName(milestone.sessionLine)) {
    const row = await sessionLinesRepository(database).find(
      milestone.workflowId,
      milestone.sessionLine as SessionLine,
    );
    if (row) {
      line = row.line;
      sessionId = row.sessionId;
      providerSessionId = row.providerSessionId;
    }
  }
  if (!sessionId && milestone.sessionId) {
    sessionId = milestone.sessionId;
    line = milestone.sessionLine ?? null;
  }
  if (!sessionId) throw new NotFoundError(NO_SESSION_LINE);
  const transcripts = sessionTranscriptsRepository(database);
  const [total, messages] = await Promise.all([
    transcripts.count(sessionId),
    transcripts.page(sessionId, page),
  ]);
  return {
    line,
    session_id: sessionId,
    provider_session_id: providerSessionId,
    messages,
    total,
    limit: page.limit,
    offset: page.offset,
  };
}
