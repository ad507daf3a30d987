// The input of a collection run over every configured transcript source (workflows/usage/collect.ts),
// built in this one place by both starters: POST /api/fetch/data ('api', the administrator's id) and
// the background fetch scheduler's tick ('schedule', no user; services/collectors/schedule.ts). Kept
// out of the workflow bundle: the source list lives beside the readers, which use node:crypto.
import { TRANSCRIPT_SOURCES } from '../../domain/collectors/sources.ts';
import type { CollectRunInput } from '../../workflows/usage/contract.ts';

export const collectRunInput = (
  trigger: CollectRunInput['trigger'],
  requestedBy: number | null,
): CollectRunInput => ({ trigger, requestedBy, sources: [...TRANSCRIPT_SOURCES] });
