/**
 * The per-request cost: server CPU of one empty task (request, task, its three status events,
 * stream set-up and teardown, no tool call), tasks one after another on one stream at a time.
 * The servers alternate within each repetition, so each ratio compares runs taken side by side.
 */
import type { BenchConfig } from '../lib/config';
import { TARGETS, type Target } from '../lib/ipc';
import type { RunRecord, ServerPool } from '../lib/server-pool';
import { runRecord } from '../lib/server-pool';
import type { Scenario } from '../lib/scenario';
import { ratio, spread, type Spread } from '../lib/stats';

export interface EmptyTaskResult {
  tasksPerRep: number;
  /** Server CPU per empty task, µs, per server. */
  cpuPerTaskUs: Partial<Record<Target, Spread>>;
  /** toolstream's CPU per task over the limit's, per repetition. */
  oursOverLimit: Spread;
  runs: RunRecord[];
}

const EMPTY: Scenario = { toolCalls: 0, intervalMs: 0, idle: false };

export async function measureEmptyTask(config: BenchConfig, pool: ServerPool, log: (line: string) => void): Promise<EmptyTaskResult> {
  const tasks = config.emptyTasks;
  const runs: RunRecord[] = [];
  const perTask = new Map<Target, number[]>(TARGETS.map((t) => [t, []]));
  const overLimit: number[] = [];
  for (let rep = 0; rep < config.reps; rep++) {
    const same: Partial<Record<Target, number>> = {};
    for (const target of TARGETS) {
      const run = await pool.run(target, tasks, EMPTY, 120_000, 1);
      if (run.result.completed !== tasks) throw new Error(`${target}: ${tasks - run.result.completed} empty tasks did not complete`);
      runs.push(runRecord(run, rep, EMPTY));
      same[target] = run.serverCpuUs / tasks;
      perTask.get(target)?.push(run.serverCpuUs / tasks);
    }
    overLimit.push(ratio(same.toolstream ?? NaN, same.limit ?? NaN));
  }
  const cpuPerTaskUs = Object.fromEntries([...perTask].map(([t, v]) => [t, spread(v)]));
  const result: EmptyTaskResult = { tasksPerRep: tasks, cpuPerTaskUs, oursOverLimit: spread(overLimit), runs };
  log(
    `empty task CPU: ${TARGETS.map((t) => `${t} ${Math.round(cpuPerTaskUs[t]?.median ?? NaN)} µs`).join(', ')}; ours/limit ${overLimit.map((r) => r.toFixed(2)).join(', ')}`,
  );
  return result;
}
