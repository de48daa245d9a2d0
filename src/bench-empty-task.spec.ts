/**
 * bench/sections/empty-task.ts pairs toolstream and the limit in each repetition (ABBA, then
 * BAAB): a machine that switches speed between the pairs must not move the ratio. Run against a
 * stand-in pool whose servers cost what the test says, so the order and the arithmetic are seen.
 */
import { benchConfig } from '../bench/lib/config';
import type { Target } from '../bench/lib/ipc';
import type { MeasuredRun, ServerPool } from '../bench/lib/server-pool';
import { measureEmptyTask } from '../bench/sections/empty-task';

/** Per-task CPU (µs) of each server on the machine's fast level; the slow level doubles every server's. */
const COST: Record<string, number> = { toolstream: 300, reference: 600, floor: 180, limit: 150 };

function standInPool(slowAfterCountedRuns: number): { pool: ServerPool; counted: Target[]; sizes: string[] } {
  const counted: Target[] = [];
  const sizes: string[] = [];
  const run = async (target: Target, tasks: number, _s: unknown, _t: number, _n: number, opts?: { watchGc?: boolean }): Promise<MeasuredRun> => {
    // Counted runs are the ones that watch the GC; the machine slows down after the first few.
    if (opts?.watchGc) counted.push(target);
    sizes.push(`${opts?.watchGc ? 'counted' : 'uncounted'} ${tasks}`);
    const slow = counted.length > slowAfterCountedRuns ? 2 : 1;
    return {
      target,
      result: { streams: 1, completed: tasks, cut: 0, failed: 0, frames: 0, elapsedMs: 1, framesPerSec: 0, clientCpuUs: 0, latency: { p50Ms: 0, p99Ms: 0 } } as unknown as MeasuredRun['result'],
      serverCpuUs: COST[target] * slow * tasks,
      loadAverage: 0,
    };
  };
  return { pool: { run, retire: async () => undefined } as unknown as ServerPool, counted, sizes };
}

describe('the empty-task section', () => {
  const config = { ...benchConfig(true), reps: 2, emptyTasks: 10, emptyUncountedTasks: 4, emptyWarmUpMinTasks: 1_000, emptyWarmUpMaxTasks: 1_000 };

  it('runs toolstream and the limit ABBA, then BAAB, and the other servers once each', async () => {
    const { pool, counted, sizes } = standInPool(Infinity);
    const result = await measureEmptyTask(config, pool, () => undefined);
    // After the warm-up's windows of 100: each counted run of emptyTasks follows an uncounted one of emptyUncountedTasks.
    expect(sizes.filter((size) => size !== 'uncounted 100')).toEqual(counted.flatMap(() => ['uncounted 4', 'counted 10']));
    expect(counted).toEqual(['toolstream', 'limit', 'limit', 'toolstream', 'reference', 'floor', 'limit', 'toolstream', 'toolstream', 'limit', 'reference', 'floor']);
    expect(result.oursOverLimit.reps).toEqual([2, 2]);
    expect(result.adjacentOursOverLimit).toEqual([
      [2, 2],
      [2, 2],
    ]);
    expect(result.runs.filter((r) => r.target === 'toolstream').map((r) => r.pass)).toEqual([0, 1, 0, 1]);
  });

  it('keeps the ratio when the machine slows down between the two pairs', async () => {
    // The first repetition's first pair (toolstream, limit) on the fast level, everything after on the slow one.
    const { pool } = standInPool(2);
    const result = await measureEmptyTask(config, pool, () => undefined);
    expect(result.adjacentOursOverLimit?.[0]).toEqual([2, 2]);
    expect(result.oursOverLimit.reps[0]).toBeCloseTo(2, 12);
    // Each server's figure for the repetition is the geometric mean of its two runs.
    expect(result.cpuPerTaskUs.toolstream?.reps[0]).toBeCloseTo(Math.sqrt(300 * 600), 9);
    expect(result.floorOverLimit?.reps[0]).toBeCloseTo(360 / Math.sqrt(150 * 300), 12);
  });
});
