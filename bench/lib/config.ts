/** What a full and a quick run measure; a full run stays under about twelve minutes, --quick under two. */
export interface BenchConfig {
  quick: boolean;
  /** Repetitions of every figure, in the same run; each figure is reported as min / median / max. */
  reps: number;
  /**
   * Empty tasks (no tool call), one after another, in each counted run of the empty-task figure.
   * About one cycle of toolstream's old generation: with 10,000 finished tasks kept, a
   * mark-compact came every ~7,000-8,000 empty tasks, its marking ~70-100 ms of CPU on V8's helper
   * threads; in runs of 1,200 it fell whole into one run or none, and the pairs whose toolstream
   * run held one read 1.76-2.94x against 1.35-2.12x without (docs/performance.md, "counted runs of
   * 8,000").
   */
  emptyTasks: number;
  /** Empty tasks of the uncounted run right before each counted one (a server idled while the others ran). */
  emptyUncountedTasks: number;
  /**
   * Before those, every server serves the same number of uncounted empty tasks,
   * `emptyWarmUpMinTasks` (V8 compiling the request path, the heap growing to its working
   * size). Equal counts, not "until the CPU per task stops falling": toolstream's falls in steps
   * (a plateau of ~1,000 tasks at ~1,400 µs, then ~600 µs after 4,000-5,000), so a stop on the
   * first plateau warmed it less than the limit, whose CPU falls smoothly (quick run 16:30:
   * toolstream stopped at 1,500 tasks, the limit ran to 2,500, 7.19x). The log still says whether
   * the last windows were still falling (bench/lib/steady.ts). `emptyWarmUpMaxTasks` equals it;
   * the time cap `emptyWarmUpMaxMs` is only a safety, for all the servers' warm-ups together, as
   * they take turns window by window (10,000 tasks of every server take about 35 s on a quiet
   * machine, over 120 s at load 10).
   */
  emptyWarmUpMinTasks: number;
  emptyWarmUpMaxTasks: number;
  emptyWarmUpMaxMs: number;
  /** Tool calls per task along the curves. */
  curveToolCalls: number[];
  /**
   * The curve points and the flat-out stream counts of a target (toolstream against the limit):
   * their repetitions run the two in an ABBA order, each twice, and take each ratio between runs
   * adjacent in time (lib/pairing.ts); the other points and rows run every server once.
   */
  pairedCurveToolCalls: number[];
  pairedConcurrency: number[];
  /**
   * ABBA blocks per repetition at a paired curve point. Its runs last about a second, and one
   * adjacent pair's ratio spread with a log standard deviation of 0.15 over the 90 pairs of 15
   * full runs (2026-12-05/06) around a geometric mean of 1.01: with one block a repetition read
   * under 0.85x in about one run in seven on the same code. Two blocks halve the variance of a
   * repetition's figure for ~4 s more per repetition (docs/performance.md, "How to read the figures").
   */
  pairedCurveBlocks: number;
  /**
   * The Redis-store curve's last point: Redis mode delivers about a quarter of in-memory's
   * frames/s, so its largest tasks would take most of the run's time; the Redis section has
   * its own rows.
   */
  redisCurveMaxToolCalls: number;
  /**
   * Frames per repetition of a curve point for toolstream, the limit and toolstream-redis: tasks
   * smaller than that are repeated (one after another, on one stream at a time) up to it. At
   * 10,000 a 1,000-call repetition lasted 60-160 ms, and one repetition of each server (the same
   * one in every run: in-memory's second, the Redis store's third) took ~2.5x the CPU per frame
   * with 80-110 ms on its other threads, most likely its old-generation GC, not taken apart: the
   * Redis store's ratio read 0.53-0.61x there and 1.51-1.65x in the second, in four full runs
   * (2026-12-06 17:03-17:59). At 50,000 a repetition lasts 0.3-0.45 s and such a GC is a fraction
   * of it (docs/performance.md, the thirty-third round's lead bullet).
   */
  curveFrameBudget: number;
  /** The same for the two references, which deliver a few hundred frames/s at best. */
  referenceFrameBudget: number;
  /**
   * The references' time budget per curve point: their store clones the whole task per event
   * (O(n²) over a task), so a point past the budget is reported as not finished and their
   * curve stops there.
   */
  referenceBudgetMs: number;
  curveTimeLimitMs: number;
  concurrency: number[];
  /**
   * Tool calls per task at each concurrency level: enough that opening the streams is a small
   * part of each run (two frames per call).
   */
  concurrencyToolCalls: number;
  /**
   * Time limit of a flat-out concurrency run of toolstream and the limit: far past what either
   * needs, so a run is cut only when something is wrong (a cut limit run voids that repetition's
   * ratio, which would otherwise be flattered).
   */
  concurrencyTimeLimitMs: number;
  /**
   * The same for the two references, which cannot deliver 1,000 streams' frames in any sensible
   * time: their rate is taken over the frames that arrived by then (reported as cut). Their paced
   * runs have this window too: they fall behind the offered rate within a second or two.
   */
  concurrencyReferenceTimeLimitMs: number;
  /**
   * Latency runs: the model "thinks" this long before each (zero-latency) tool call. Latency is
   * only meaningful below saturation (past it, it measures the queue); 50 ms, twenty tool calls
   * a second per stream, is still far faster than any model, and the flat-out runs report
   * latency at saturation too.
   */
  pacedIntervalMs: number;
  /** Stream counts of the paced (latency) runs. */
  pacedStreams: number[];
  /**
   * Long enough that the streams overlap: opening 1,000 streams takes a server a few seconds,
   * and shorter tasks would end before the last ones open.
   */
  pacedToolCalls: number;
  pacedTimeLimitMs: number;
  idleStreams: number;
  /** Tool calls of the one big task whose memory is measured (a full run: the 100,000 the issue names). */
  bigTaskToolCalls: number[];
  /** Finished tasks kept for replay, and the tool calls each one made. */
  retainedTasks: number;
  retainedTaskToolCalls: number;
  /** Executor overhead: repetitions (the target is met on the worst), tool calls per run, runs per side per repetition. */
  executorReps: number;
  executorToolCalls: number;
  executorWarmUpRuns: number;
  executorRuns: number;
}

/** What quick and full runs share; each mode below sets only what differs. */
const SHARED = {
  curveToolCalls: [100, 1_000, 3_000, 10_000, 30_000],
  pairedCurveToolCalls: [30_000],
  pairedConcurrency: [1_000],
  pairedCurveBlocks: 2,
  concurrency: [100, 1_000],
  pacedIntervalMs: 50,
  pacedStreams: [100, 1_000],
  executorToolCalls: 100,
};

export function benchConfig(quick: boolean): BenchConfig {
  return quick
    ? {
        ...SHARED,
        quick,
        reps: 1,
        emptyTasks: 100,
        emptyUncountedTasks: 100,
        emptyWarmUpMinTasks: 2_500,
        emptyWarmUpMaxTasks: 2_500,
        emptyWarmUpMaxMs: 60_000,
        // The 30,000 point is the one-stream target's; 3,000 and 10,000 only fill in the curve.
        curveToolCalls: [100, 1_000, 30_000],
        redisCurveMaxToolCalls: 1_000,
        curveFrameBudget: 4_000,
        referenceFrameBudget: 400,
        referenceBudgetMs: 3_000,
        curveTimeLimitMs: 20_000,
        concurrency: [1_000],
        concurrencyToolCalls: 50,
        concurrencyTimeLimitMs: 60_000,
        concurrencyReferenceTimeLimitMs: 3_000,
        pacedStreams: [100],
        pacedToolCalls: 20,
        pacedTimeLimitMs: 5_000,
        idleStreams: 500,
        bigTaskToolCalls: [2_000],
        retainedTasks: 300,
        retainedTaskToolCalls: 4,
        executorReps: 1,
        executorWarmUpRuns: 5,
        executorRuns: 6,
      }
    : {
        ...SHARED,
        quick,
        reps: 3,
        emptyTasks: 8_000,
        emptyUncountedTasks: 1_200,
        // Past toolstream's default cap of 10,000 kept tasks (A2A_DEFAULTS.maxRetainedTasks): a
        // server that has served that many starts forgetting the oldest one per task, and V8
        // then deoptimises and recompiles the store's paths once, over ~2,000 tasks.
        emptyWarmUpMinTasks: 12_000,
        emptyWarmUpMaxTasks: 12_000,
        emptyWarmUpMaxMs: 180_000,
        curveFrameBudget: 50_000,
        referenceFrameBudget: 2_000,
        redisCurveMaxToolCalls: 10_000,
        // The reference per call needs about 10 s for its 1,000-call point on a quiet machine.
        referenceBudgetMs: 15_000,
        curveTimeLimitMs: 60_000,
        concurrencyToolCalls: 100,
        concurrencyTimeLimitMs: 60_000,
        concurrencyReferenceTimeLimitMs: 5_000,
        pacedToolCalls: 100,
        pacedTimeLimitMs: 10_000,
        idleStreams: 10_000,
        bigTaskToolCalls: [100_000],
        retainedTasks: 10_000,
        retainedTaskToolCalls: 4,
        executorReps: 5,
        executorWarmUpRuns: 20,
        executorRuns: 24,
      };
}
