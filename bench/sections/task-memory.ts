/**
 * Memory per task, on a fresh warmed-up toolstream per row (its repetitions follow one another
 * on it; each is measured against the GC'd heap just before it, earlier tasks included):
 * - one big task (10,000 and 100,000 tool calls) on one stream: heap and RSS after a full GC
 *   before and after (the finished task kept for replay), and the peaks while it runs (sampled
 *   without GC); the task's event log and artifacts are bounded, so these stay flat with size;
 * - many small finished tasks kept for replay, on a fresh server each repetition that served
 *   nothing before: heap and RSS after a full GC, before and after, over the count.
 */
import { loadavg } from 'node:os';
import type { BenchConfig } from '../lib/config';
import type { Target } from '../lib/ipc';
import type { ServerProcess } from '../lib/processes';
import type { BenchRedis } from '../lib/redis';
import type { ServerPool } from '../lib/server-pool';
import { spread, type Spread } from '../lib/stats';

const MiB = 2 ** 20;
const SAMPLE_EVERY_MS = 100;

export interface BigTaskRep {
  rep: number;
  loadAverage: number;
  /** After GC, with the finished task kept, over the same before it ran. */
  retainedHeapMiB: number;
  retainedRssMiB: number;
  /** Highest heap and RSS seen while it ran, over the before (no GC). */
  peakHeapMiB: number;
  peakRssMiB: number;
  framesPerSec: number;
  /** Redis mode: what Redis holds more (used_memory) once the task finished. */
  redisMiB?: number;
}

export interface BigTaskRow {
  target: Target;
  toolCalls: number;
  retainedHeapMiB: Spread;
  retainedRssMiB: Spread;
  peakHeapMiB: Spread;
  peakRssMiB: Spread;
  redisMiB?: Spread;
  reps: BigTaskRep[];
}

export interface RetainedTasksRep {
  rep: number;
  loadAverage: number;
  heapPerTaskKiB: number;
  rssPerTaskKiB: number;
  heapBeforeMiB: number;
  heapAfterMiB: number;
  redisPerTaskKiB?: number;
}

export interface RetainedTasksRow {
  target: Target;
  tasks: number;
  toolCallsPerTask: number;
  heapPerTaskKiB: Spread;
  rssPerTaskKiB: Spread;
  redisPerTaskKiB?: Spread;
  reps: RetainedTasksRep[];
}

export interface TaskMemoryResult {
  bigTask: BigTaskRow[];
  retained: RetainedTasksRow[];
}

function redisOf(target: Target, pool: ServerPool): BenchRedis | undefined {
  return target === 'toolstream-redis' ? pool.redis : undefined;
}

/** Samples memory (no GC) until stopped; resolves with the highest heap and RSS seen. */
function samplePeaks(server: ServerProcess): { stop: () => Promise<{ heap: number; rss: number }> } {
  let running = true;
  let heap = 0;
  let rss = 0;
  const loop = (async () => {
    while (running) {
      const m = await server.memory(false);
      heap = Math.max(heap, m.heapUsed);
      rss = Math.max(rss, m.rss);
      await new Promise((resolve) => setTimeout(resolve, SAMPLE_EVERY_MS));
    }
  })();
  return {
    stop: async () => {
      running = false;
      await loop;
      return { heap, rss };
    },
  };
}

async function bigTask(target: Target, toolCalls: number, config: BenchConfig, pool: ServerPool): Promise<BigTaskRow> {
  const reps: BigTaskRep[] = [];
  await pool.retire(target);
  const server = await pool.server(target);
  for (let rep = 0; rep < config.reps; rep++) {
    const loadAverage = loadavg()[0];
    const redisBefore = await redisOf(target, pool)?.usedMemory();
    const before = await server.memory(true);
    const peaks = samplePeaks(server);
    const result = await pool.load.run({ url: server.url, streams: 1, scenario: { toolCalls, intervalMs: 0, idle: false }, timeLimitMs: 120_000 });
    const peak = await peaks.stop();
    const after = await server.memory(true);
    if (result.completed !== 1) throw new Error(`${target}: the task of ${toolCalls} tool calls did not complete: ${result.errors.join('; ')}`);
    reps.push({
      rep,
      loadAverage,
      retainedHeapMiB: (after.heapUsed - before.heapUsed) / MiB,
      retainedRssMiB: (after.rss - before.rss) / MiB,
      peakHeapMiB: (peak.heap - before.heapUsed) / MiB,
      peakRssMiB: (peak.rss - before.rss) / MiB,
      framesPerSec: result.framesPerSec,
      ...(redisBefore !== undefined ? { redisMiB: ((await redisOf(target, pool)?.usedMemory()) ?? NaN) / MiB - redisBefore / MiB } : {}),
    });
  }
  await pool.retire(target);
  const s = (f: (r: BigTaskRep) => number): Spread => spread(reps.map(f));
  return {
    target,
    toolCalls,
    retainedHeapMiB: s((r) => r.retainedHeapMiB),
    retainedRssMiB: s((r) => r.retainedRssMiB),
    peakHeapMiB: s((r) => r.peakHeapMiB),
    peakRssMiB: s((r) => r.peakRssMiB),
    ...(target === 'toolstream-redis' ? { redisMiB: s((r) => r.redisMiB ?? NaN) } : {}),
    reps,
  };
}

/** Concurrent streams while the retained tasks are made; enough to be quick, few enough to stay small. */
const RETAINED_AT_ONCE = 50;

async function retainedTasks(target: Target, config: BenchConfig, pool: ServerPool): Promise<RetainedTasksRow> {
  const tasks = config.retainedTasks;
  const toolCalls = config.retainedTaskToolCalls;
  const reps: RetainedTasksRep[] = [];
  for (let rep = 0; rep < config.reps; rep++) {
    // A server that has served nothing: the store's default cap (maxRetainedTasks, 10,000) then
    // holds exactly the tasks measured, none evicted for a warm-up's.
    await pool.retire(target);
    await redisOf(target, pool)?.flush();
    const server = await pool.server(target, false);
    const loadAverage = loadavg()[0];
    const redisBefore = await redisOf(target, pool)?.usedMemory();
    const before = await server.memory(true);
    const result = await pool.load.run({
      url: server.url,
      streams: tasks,
      maxOpen: RETAINED_AT_ONCE,
      scenario: { toolCalls, intervalMs: 0, idle: false },
      timeLimitMs: 300_000,
    });
    const after = await server.memory(true);
    if (result.completed !== tasks) throw new Error(`${target}: ${tasks - result.completed} of ${tasks} tasks did not complete`);
    reps.push({
      rep,
      loadAverage,
      heapPerTaskKiB: (after.heapUsed - before.heapUsed) / tasks / 1024,
      rssPerTaskKiB: (after.rss - before.rss) / tasks / 1024,
      heapBeforeMiB: before.heapUsed / MiB,
      heapAfterMiB: after.heapUsed / MiB,
      ...(redisBefore !== undefined ? { redisPerTaskKiB: (((await redisOf(target, pool)?.usedMemory()) ?? NaN) - redisBefore) / tasks / 1024 } : {}),
    });
  }
  await pool.retire(target);
  return {
    target,
    tasks,
    toolCallsPerTask: toolCalls,
    heapPerTaskKiB: spread(reps.map((r) => r.heapPerTaskKiB)),
    rssPerTaskKiB: spread(reps.map((r) => r.rssPerTaskKiB)),
    ...(target === 'toolstream-redis' ? { redisPerTaskKiB: spread(reps.map((r) => r.redisPerTaskKiB ?? NaN)) } : {}),
    reps,
  };
}

export async function measureTaskMemory(
  config: BenchConfig,
  pool: ServerPool,
  targets: readonly Target[],
  log: (line: string) => void,
): Promise<TaskMemoryResult> {
  const result: TaskMemoryResult = { bigTask: [], retained: [] };
  for (const target of targets) {
    for (const toolCalls of config.bigTaskToolCalls) {
      const row = await bigTask(target, toolCalls, config, pool);
      result.bigTask.push(row);
      log(
        `task memory ${target}, one task of ${toolCalls} calls: retained heap ${row.retainedHeapMiB.reps.map((v) => v.toFixed(1)).join(', ')} MiB, peak RSS ${row.peakRssMiB.reps.map((v) => v.toFixed(0)).join(', ')} MiB`,
      );
    }
    const row = await retainedTasks(target, config, pool);
    result.retained.push(row);
    log(`task memory ${target}, ${row.tasks} finished tasks kept: ${row.heapPerTaskKiB.reps.map((v) => v.toFixed(2)).join(', ')} KiB heap per task`);
  }
  return result;
}
