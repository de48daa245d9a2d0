/**
 * The per-request cost: server CPU of one empty task (request, task, its three status events,
 * stream set-up and teardown, no tool call), tasks one after another on one stream at a time.
 * Each server is first warmed, all alike and taking turns window by window: the same number of
 * empty tasks each, and the log says whether its CPU per task had stopped falling
 * (bench/lib/steady.ts; before, the repetitions were a fresh server's first tasks, and V8
 * compiling the request path on its own threads was a quarter of toolstream's figure). The
 * servers then alternate within each repetition, toolstream and the limit twice each in an ABBA
 * block (lib/pairing.ts): this VM runs every server at a faster or a slower level for tens of
 * seconds at a time (toolstream ~300 or ~500 µs per task, the others alike), and a switch between
 * toolstream's run and the limit's moved a repetition's ratio from ~1.1× to ~3×; paired, a
 * switch between the pairs cancels out. Each counted run follows a shorter uncounted one on the
 * same server, as every server idles while the others run. A counted run is long enough to hold
 * one cycle of toolstream's old generation (BenchConfig.emptyTasks): a mark-compact's marking is
 * a cost of the tasks that filled the heap, not of the few in whose run it falls. The log says
 * how many GCs other than scavenges fell in each counted run.
 *
 * Beside the three servers of every section runs the framework floor (bench/servers/floor-server.ts):
 * NestJS + Express around the limit's own handler. floor/limit is what the framework toolstream is
 * built on costs per request; toolstream/floor is what toolstream itself adds.
 */
import type { BenchConfig } from '../lib/config';
import { EMPTY_TASK_TARGETS, type Target } from '../lib/ipc';
import type { MeasuredRun, RunRecord, ServerPool } from '../lib/server-pool';
import { runRecord } from '../lib/server-pool';
import { EMPTY_TASK } from '../lib/scenario';
import { adjacentRatios, geometricMean, PAIRED, repetitionOrder } from '../lib/pairing';
import { ratio, spread, trimmedMean, type Spread } from '../lib/stats';
import { untilSteady, type Batch } from '../lib/steady';

/** How one server reached steady state before the repetitions. */
export interface EmptyTaskWarmUp {
  tasks: number;
  /** CPU per task of each warm-up window (a trimmed mean), µs. */
  cpuPerTaskUs: number[];
  /** False: the CPU per task was still falling in the warm-up's last windows (or the time cap ended it). */
  steady: boolean;
}

export interface EmptyTaskResult {
  tasksPerRep: number;
  /** The warm-up each server needed (absent in results written before it existed). */
  warmUp?: Partial<Record<Target, EmptyTaskWarmUp>>;
  /** Server CPU per empty task, µs, per server. */
  cpuPerTaskUs: Partial<Record<Target, Spread>>;
  /**
   * toolstream's CPU per task over the limit's, per repetition: the ratio of the geometric means
   * of their two runs each (one run each in results written before the runs were paired).
   */
  oursOverLimit: Spread;
  /** Per repetition, toolstream's CPU per task over the limit's in each of the ABBA block's two adjacent pairs. */
  adjacentOursOverLimit?: number[][];
  /** The framework floor's over the limit's, and toolstream's over the floor's, per repetition (absent in older results). */
  floorOverLimit?: Spread;
  oursOverFloor?: Spread;
  runs: RunRecord[];
}

/** A run of `tasks` empty tasks against one server, one at a time; its CPU per task, µs. */
export async function emptyRun(pool: ServerPool, target: Target, tasks: number, watchGc = false): Promise<{ run: MeasuredRun; cpuPerTaskUs: number }> {
  const run = await pool.run(target, tasks, EMPTY_TASK, 120_000, 1, { watchGc });
  if (run.result.completed !== tasks) throw new Error(`${target}: ${tasks - run.result.completed} empty tasks did not complete`);
  return { run, cpuPerTaskUs: run.serverCpuUs / tasks };
}

/** A warm-up window: runs of RUN_TASKS tasks, judged by their trimmed mean (one run slowed by
 * another process on the machine, or by a major GC, does not move it). */
const WINDOW_RUNS = 5;
const RUN_TASKS = 100;

/**
 * Serves the config's number of empty tasks in windows, the same for every server (see
 * BenchConfig.emptyWarmUpMinTasks for why not "until it stops falling"), and says whether the
 * server's CPU per task had settled by the end (the last two windows not 3 % below the one
 * before). The time cap is only a safety.
 */
export async function warmUpEmptyTask(
  config: BenchConfig,
  pool: ServerPool,
  target: Target,
  inTurn: (window: () => Promise<Batch>) => Promise<Batch> = (window) => window(),
): Promise<EmptyTaskWarmUp> {
  const window = async (): Promise<Batch> => {
    const runs: number[] = [];
    for (let i = 0; i < WINDOW_RUNS; i++) runs.push((await emptyRun(pool, target, RUN_TASKS)).cpuPerTaskUs);
    return { figure: trimmedMean(runs), cost: WINDOW_RUNS * RUN_TASKS };
  };
  const warm = await untilSteady(() => inTurn(window), {
    tolerance: 0.03,
    // Two windows in a row: under load one window's noise is larger than the compiler's steps.
    patience: 2,
    minCost: config.emptyWarmUpMinTasks,
    maxCost: config.emptyWarmUpMaxTasks,
    maxMs: config.emptyWarmUpMaxMs,
  });
  return { tasks: warm.cost, cpuPerTaskUs: warm.figures, steady: warm.steady };
}

/**
 * Warms every server as warmUpEmptyTask does, the servers taking turns window by window (in the
 * order given), so that none sits idle through the others' whole warm-ups: warmed one after
 * another, the first server (toolstream) idled ~17 s before its first repetition and the last
 * (the limit) none.
 */
export async function warmUpEmptyTasks(config: BenchConfig, pool: ServerPool, targets: readonly Target[]): Promise<Partial<Record<Target, EmptyTaskWarmUp>>> {
  let turn: Promise<unknown> = Promise.resolve();
  let failed = false;
  const inTurn = (window: () => Promise<Batch>): Promise<Batch> => {
    const mine = turn.then(() => {
      // One server's failure ends them all: no window runs after it.
      if (failed) throw new Error('another server failed its empty-task warm-up');
      return window();
    });
    turn = mine.catch(() => {
      failed = true;
    });
    return mine;
  };
  const warmed = await Promise.all(targets.map((target) => warmUpEmptyTask(config, pool, target, inTurn)));
  return Object.fromEntries(targets.map((target, i) => [target, warmed[i]]));
}

/** One line: the tasks a server's warm-up took and its CPU per task window by window. */
export function describeWarmUp(target: Target, warm: EmptyTaskWarmUp): string {
  const batches = warm.cpuPerTaskUs.map((us) => Math.round(us)).join(' → ');
  return `${target}: ${warm.tasks} tasks, ${batches} µs per task${warm.steady ? '' : ' (still falling at its end)'}`;
}

export async function measureEmptyTask(config: BenchConfig, pool: ServerPool, log: (line: string) => void): Promise<EmptyTaskResult> {
  const tasks = config.emptyTasks;
  const runs: RunRecord[] = [];
  const perTask = new Map<Target, number[]>(EMPTY_TASK_TARGETS.map((t) => [t, []]));
  /** The uncounted runs' CPU per task: what a server pays after idling while the others ran. */
  const afterIdle = new Map<Target, number[]>(EMPTY_TASK_TARGETS.map((t) => [t, []]));
  const overLimit: number[] = [];
  const floorOverLimit: number[] = [];
  const oursOverFloor: number[] = [];
  /** The GCs other than scavenges (mark-compacts and their incremental steps) in each counted run. */
  const majorGcs = new Map<Target, number[]>(EMPTY_TASK_TARGETS.map((t) => [t, []]));
  /** Each counted run's CPU on the server's other threads per task: a major GC's marking and sweeping. */
  const otherThreads = new Map<Target, number[]>(EMPTY_TASK_TARGETS.map((t) => [t, []]));
  const warmUp = await warmUpEmptyTasks(config, pool, EMPTY_TASK_TARGETS);
  for (const target of EMPTY_TASK_TARGETS) {
    const warm = warmUp[target];
    if (warm) log(`empty task warm-up, ${describeWarmUp(target, warm)}`);
  }
  const pairs: number[][] = [];
  for (let rep = 0; rep < config.reps; rep++) {
    /** Each server's counted runs in this repetition (two of toolstream and of the limit). */
    const same = new Map<Target, number[]>();
    const inOrder: Array<{ target: Target; cpuPerTaskUs: number }> = [];
    for (const target of repetitionOrder(EMPTY_TASK_TARGETS, rep, true)) {
      // Uncounted, right before the counted run: each server has sat idle while the others ran
      // (V8 shrinks an idle heap and may drop the bytecode of functions it has not run), so each
      // is measured as freshly warm as the others, not with the idle penalty of its position in
      // the order.
      afterIdle.get(target)?.push((await emptyRun(pool, target, config.emptyUncountedTasks)).cpuPerTaskUs);
      const { run, cpuPerTaskUs } = await emptyRun(pool, target, tasks, true);
      majorGcs.get(target)?.push(run.gc?.others.length ?? NaN);
      otherThreads.get(target)?.push((run.serverOtherThreadsUs ?? NaN) / tasks);
      const record = runRecord(run, rep, EMPTY_TASK);
      const mine = same.get(target) ?? [];
      if (PAIRED.includes(target)) record.pass = mine.length;
      runs.push(record);
      same.set(target, [...mine, cpuPerTaskUs]);
      inOrder.push({ target, cpuPerTaskUs });
    }
    pairs.push(adjacentRatios(inOrder, (r) => r.cpuPerTaskUs));
    // A server's figure for the repetition: the geometric mean of its runs in it.
    const of = (target: Target): number => geometricMean(same.get(target) ?? []);
    for (const target of EMPTY_TASK_TARGETS) perTask.get(target)?.push(of(target));
    overLimit.push(ratio(of('toolstream'), of('limit')));
    floorOverLimit.push(ratio(of('floor'), of('limit')));
    oursOverFloor.push(ratio(of('toolstream'), of('floor')));
  }
  // Only this section serves the floor: its process does not stay up through the next ones.
  await pool.retire('floor');
  const cpuPerTaskUs = Object.fromEntries([...perTask].map(([t, v]) => [t, spread(v)]));
  const result: EmptyTaskResult = {
    tasksPerRep: tasks,
    warmUp,
    cpuPerTaskUs,
    oursOverLimit: spread(overLimit),
    floorOverLimit: spread(floorOverLimit),
    oursOverFloor: spread(oursOverFloor),
    adjacentOursOverLimit: pairs,
    runs,
  };
  const reps = (v: number[]): string => v.map((r) => r.toFixed(2)).join(', ');
  log(
    `empty task CPU: ${EMPTY_TASK_TARGETS.map((t) => `${t} ${Math.round(cpuPerTaskUs[t]?.median ?? NaN)} µs`).join(', ')}; ` +
      `ours/limit ${reps(overLimit)} (adjacent pairs ${pairs.map((p) => p.map((r) => r.toFixed(2)).join(' & ')).join(', ')}); floor/limit ${reps(floorOverLimit)}; ours/floor ${reps(oursOverFloor)}; ` +
      `uncounted runs after idling, µs per task: ${EMPTY_TASK_TARGETS.map((t) => `${t} ${(afterIdle.get(t) ?? []).map((us) => Math.round(us)).join(', ')}`).join('; ')}; ` +
      `GCs other than scavenges in each counted run: ${EMPTY_TASK_TARGETS.map((t) => `${t} ${(majorGcs.get(t) ?? []).join(', ')}`).join('; ')}; ` +
      `CPU on the servers' other threads (GC helpers, compiler), µs per task in each counted run: ${EMPTY_TASK_TARGETS.map((t) => `${t} ${(otherThreads.get(t) ?? []).map((us) => Math.round(us)).join(', ')}`).join('; ')}`,
  );
  return result;
}
