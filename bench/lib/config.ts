/** What a full and a quick run measure; a full run stays under about ten minutes. */
export interface BenchConfig {
  quick: boolean;
  /** Runs per figure; each figure is the median of them. */
  reps: number;
  /** Tool calls per task for the pipeline-cost sweep. */
  pipelineToolCalls: number[];
  /** Tool calls the sweep spends per measurement (small tasks are repeated up to it). */
  pipelineBudgetToolCalls: number;
  /** Tool calls per task for the single-stream comparison. */
  singleStreamToolCalls: number[];
  concurrency: number[];
  /** Tool calls per task at each concurrency level. */
  concurrencyToolCalls: number;
  /**
   * Latency runs: the model "thinks" this long before each (zero-latency) tool call. Latency is
   * only meaningful below saturation (past it, it measures the queue); 50 ms, twenty tool calls
   * a second per stream, is still far faster than any model, and the flat-out runs report
   * latency at saturation too.
   */
  pacedIntervalMs: number;
  /**
   * Long enough that the streams overlap: opening 1,000 streams takes toolstream a few seconds
   * (a couple of ms of CPU per request), and shorter tasks would end before the last ones open.
   */
  pacedToolCalls: number;
  pacedTimeLimitMs: number;
  idleStreams: number[];
  /** Opening 10,000 streams takes toolstream ~30 s on two cores: one run there keeps the bench near ten minutes. */
  idleReps: { upTo1k: number; larger: number };
  /**
   * Bounds on one load run; streams still open then are cut. The reference needs ~20 s for one
   * task of 1,000 tool calls (its store clones the task per event) and hours for 30,000.
   */
  singleStreamTimeLimitMs: { upTo1k: number; larger: number };
  concurrencyTimeLimitMs: number;
  /** Executor overhead: tool calls per agent run, and runs per side. */
  executorToolCalls: number;
  executorWarmUpRuns: number;
  executorRuns: number;
}

/** What quick and full runs share; each mode below sets only what differs. */
const SHARED = {
  pipelineToolCalls: [10, 100, 1_000, 10_000],
  singleStreamToolCalls: [1_000, 30_000],
  concurrency: [1, 100, 1_000],
  pacedIntervalMs: 50,
  idleStreams: [1_000, 10_000],
  executorToolCalls: 100,
};

export function benchConfig(quick: boolean): BenchConfig {
  return quick
    ? {
        ...SHARED,
        quick,
        reps: 1,
        pipelineBudgetToolCalls: 5_000,
        concurrencyToolCalls: 50,
        pacedToolCalls: 80,
        pacedTimeLimitMs: 10_000,
        idleReps: { upTo1k: 1, larger: 1 },
        singleStreamTimeLimitMs: { upTo1k: 6_000, larger: 4_000 },
        concurrencyTimeLimitMs: 4_000,
        executorWarmUpRuns: 20,
        executorRuns: 10,
      }
    : {
        ...SHARED,
        quick,
        reps: 3,
        pipelineBudgetToolCalls: 10_000,
        concurrencyToolCalls: 100,
        pacedToolCalls: 100,
        pacedTimeLimitMs: 12_000,
        idleReps: { upTo1k: 3, larger: 1 },
        singleStreamTimeLimitMs: { upTo1k: 30_000, larger: 8_000 },
        concurrencyTimeLimitMs: 5_000,
        executorWarmUpRuns: 40,
        executorRuns: 40,
      };
}
