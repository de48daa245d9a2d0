import type { Scenario } from '../lib/scenario';

export interface LoadJob {
  /** The JSON-RPC endpoint, e.g. http://127.0.0.1:1234/ */
  url: string;
  streams: number;
  /** At most this many streams open at once (1 = one task after another); default all. */
  maxOpen?: number;
  scenario: Scenario;
  /** Streams still open after this are cut (destroyed) and the result says so. */
  timeLimitMs: number;
}

export interface LatencySummary {
  count: number;
  p50Ms: number;
  p99Ms: number;
  maxMs: number;
  /**
   * The same by where a frame falls in its task: its first tenth of frames (while the server
   * also sets the other tasks up), its last tenth (while they end) and the rest.
   */
  byPhase?: Record<LatencyPhase, { count: number; p99Ms: number }>;
}

export type LatencyPhase = 'first' | 'middle' | 'last';

export interface LoadResult {
  streams: number;
  /** Streams that ended normally (the server closed them after the last event). */
  completed: number;
  /** Streams that failed (HTTP error, JSON-RPC error, connection error). */
  failed: number;
  /** Streams destroyed at the time limit. */
  cut: number;
  /** The first few distinct errors, for the report. */
  errors: string[];
  events: number;
  /** tool-call-v1 frames among the events. */
  frames: number;
  /** Frames sampled and fully checked (JSON.parse + parseToolCalls) that were not valid. */
  invalidFrames: number;
  checkedFrames: number;
  /** Streams that ended normally without exactly the frames the scenario publishes. */
  wrongFrameCounts: number;
  bytes: number;
  /** First request sent to the last stream ended (or cut). */
  elapsedMs: number;
  framesPerSec: number;
  eventsPerSec: number;
  /** CPU the load process spent (user + system) over the run, in µs: it must not be the bottleneck. */
  clientCpuUs: number;
  latency: LatencySummary;
}
