import { tool } from '@langchain/core/tools';
import { z } from 'zod';
import { sleep } from '../../executor/abortable';

export const SLOW_TASK_TOOL = 'slow_task';
/** A demo step never holds a run longer than this. */
export const SLOW_TASK_MAX_MS = 10_000;

/** Waits the requested time (capped), and stops the moment its run is cancelled. */
export function createSlowTaskTool() {
  return tool(
    async ({ ms, label }, config) => {
      const waitedMs = Math.min(ms, SLOW_TASK_MAX_MS);
      await sleep(waitedMs, config?.signal);
      return { label: label ?? 'slow step', requestedMs: ms, waitedMs, capped: waitedMs < ms };
    },
    {
      name: SLOW_TASK_TOOL,
      description: `A deliberately slow step: waits the given number of milliseconds (at most ${SLOW_TASK_MAX_MS}).`,
      schema: z.object({
        ms: z.number().int().min(0).describe('How long to wait, in milliseconds'),
        label: z.string().max(200).optional(),
      }),
    },
  );
}
