/**
 * 1. Pipeline cost: server CPU per frame, from the executor event to SSE bytes written, at
 * 10 to 10,000 tool calls per task. Tasks run one after another on one stream. Each batch is
 * paired with a batch of as many empty tasks (request, task, stream set-up and teardown, no
 * frame) run just before it; the difference over the frames is what each frame costs. Flat
 * across sizes = linear total.
 */
import type { BenchConfig } from '../lib/config';
import type { Target } from '../lib/ipc';
import type { ServerPool } from '../lib/server-pool';
import { FRAMES_PER_TOOL_CALL } from '../lib/scenario';
import { median } from '../lib/stats';

export interface PipelineCostRow {
  target: Target;
  toolCallsPerTask: number;
  tasks: number;
  /** CPU per frame beyond an empty task's cost, median of the runs. */
  cpuPerFrameUs: number;
  /** CPU per frame with the task's fixed cost included. */
  cpuPerFrameAllInUs: number;
}

export interface PipelineCostResult {
  /** CPU of one empty task (median over every paired batch), per server. */
  emptyTaskCpuUs: Record<string, number>;
  rows: PipelineCostRow[];
}

export const PIPELINE_TARGETS: readonly Target[] = ['toolstream', 'limit'];

export async function measurePipelineCost(config: BenchConfig, pool: ServerPool, log: (line: string) => void): Promise<PipelineCostResult> {
  const result: PipelineCostResult = { emptyTaskCpuUs: {}, rows: [] };
  const sequential = async (target: Target, toolCalls: number, tasks: number): Promise<number> => {
    const run = await pool.run(target, tasks, { toolCalls, intervalMs: 0, idle: false }, 120_000, 1);
    if (run.result.completed !== tasks) throw new Error(`${target}: ${tasks - run.result.completed} tasks did not complete`);
    return run.serverCpuUs;
  };
  for (const target of PIPELINE_TARGETS) {
    const emptyTask: number[] = [];
    for (const toolCalls of config.pipelineToolCalls) {
      const tasks = Math.max(1, Math.round(config.pipelineBudgetToolCalls / toolCalls));
      const frames = tasks * toolCalls * FRAMES_PER_TOOL_CALL;
      const marginal: number[] = [];
      const allIn: number[] = [];
      for (let rep = 0; rep < config.reps; rep++) {
        const emptyUs = await sequential(target, 0, tasks);
        const cpuUs = await sequential(target, toolCalls, tasks);
        emptyTask.push(emptyUs / tasks);
        marginal.push((cpuUs - emptyUs) / frames);
        allIn.push(cpuUs / frames);
      }
      const row = { target, toolCallsPerTask: toolCalls, tasks, cpuPerFrameUs: median(marginal), cpuPerFrameAllInUs: median(allIn) };
      result.rows.push(row);
      log(`pipeline ${target} ${toolCalls} calls/task ×${tasks}: ${row.cpuPerFrameUs.toFixed(2)} µs/frame (${row.cpuPerFrameAllInUs.toFixed(2)} all-in)`);
    }
    result.emptyTaskCpuUs[target] = median(emptyTask);
  }
  return result;
}
