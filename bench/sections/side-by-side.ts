/**
 * 2 and 3. End to end over HTTP, the three servers side by side in the same run: one stream
 * at 1,000 and 30,000 tool calls per task, then 1, 100 and 1,000 concurrent streams (flat out
 * for frames/s, and paced for latency). Each figure is the median of the runs; each ratio is
 * taken between runs of the same repetition, then its median reported.
 */
import type { BenchConfig } from '../lib/config';
import { TARGETS, type Target } from '../lib/ipc';
import type { MeasuredRun, ServerPool } from '../lib/server-pool';
import type { Scenario } from '../lib/scenario';
import { median, medianBy, ratio } from '../lib/stats';

export interface TargetFigures {
  target: Target;
  framesPerSec: number;
  eventsPerSec: number;
  /** Server CPU per frame delivered, all in. */
  cpuPerFrameUs: number;
  /** The load process's CPU per frame: shows the client was not the bottleneck. */
  clientCpuPerFrameUs: number;
  latencyP50Ms: number;
  latencyP99Ms: number;
  /** Frames received, of those the scenario publishes (less when cut at the time limit). */
  framesReceived: number;
  framesExpected: number;
  /** True when a run hit the time limit: its rate is over the frames that arrived by then. */
  cut: boolean;
  /** Streams that failed, over all runs, and the first errors. */
  failedStreams: number;
  errors: string[];
}

export interface ComparisonRow {
  kind: 'single-stream' | 'throughput' | 'latency';
  streams: number;
  scenario: Scenario;
  timeLimitMs: number;
  /** Paced runs: the frames/s the scripted runs publish if nothing holds them back. */
  offeredFramesPerSec?: number;
  figures: TargetFigures[];
  /** toolstream frames/s over reference, and over limit (medians of same-repetition ratios). */
  oursOverReference: number;
  oursOverLimit: number;
  /** toolstream CPU per frame over the limit's. */
  cpuOursOverLimit: number;
}

function figures(target: Target, runs: MeasuredRun[], framesExpected: number): TargetFigures {
  const mid = medianBy(runs, (r) => r.result.framesPerSec);
  return {
    target,
    framesPerSec: mid.result.framesPerSec,
    eventsPerSec: mid.result.eventsPerSec,
    cpuPerFrameUs: median(runs.map((r) => r.serverCpuUs / r.result.frames)),
    clientCpuPerFrameUs: median(runs.map((r) => r.result.clientCpuUs / r.result.frames)),
    latencyP50Ms: median(runs.map((r) => r.result.latency.p50Ms)),
    latencyP99Ms: median(runs.map((r) => r.result.latency.p99Ms)),
    framesReceived: mid.result.frames,
    framesExpected,
    cut: runs.some((r) => r.result.cut > 0),
    failedStreams: runs.reduce((sum, r) => sum + r.result.failed, 0),
    errors: [...new Set(runs.flatMap((r) => r.result.errors))].slice(0, 3),
  };
}

async function compare(
  kind: ComparisonRow['kind'],
  streams: number,
  scenario: Scenario,
  timeLimitMs: number,
  reps: number,
  pool: ServerPool,
): Promise<ComparisonRow> {
  const runs = new Map<Target, MeasuredRun[]>(TARGETS.map((t) => [t, []]));
  const overRef: number[] = [];
  const overLimit: number[] = [];
  const cpuOverLimit: number[] = [];
  for (let rep = 0; rep < reps; rep++) {
    const same: Partial<Record<Target, MeasuredRun>> = {};
    for (const target of TARGETS) {
      const run = await pool.run(target, streams, scenario, timeLimitMs);
      same[target] = run;
      runs.get(target)?.push(run);
    }
    const { toolstream: ours, reference: ref, limit } = same;
    if (!ours || !ref || !limit) continue;
    overRef.push(ratio(ours.result.framesPerSec, ref.result.framesPerSec));
    overLimit.push(ratio(ours.result.framesPerSec, limit.result.framesPerSec));
    cpuOverLimit.push(ratio(ours.serverCpuUs / ours.result.frames, limit.serverCpuUs / limit.result.frames));
  }
  const framesExpected = streams * scenario.toolCalls * 2;
  return {
    kind,
    streams,
    scenario,
    timeLimitMs,
    offeredFramesPerSec: scenario.intervalMs > 0 ? (streams * 2 * 1000) / scenario.intervalMs : undefined,
    figures: TARGETS.map((t) => figures(t, runs.get(t) ?? [], framesExpected)),
    oursOverReference: median(overRef),
    oursOverLimit: median(overLimit),
    cpuOursOverLimit: median(cpuOverLimit),
  };
}

export function describeRow(row: ComparisonRow): string {
  const f = row.figures.map((x) => `${x.target} ${Math.round(x.framesPerSec)} f/s p99 ${x.latencyP99Ms.toFixed(2)} ms${x.cut ? ' (cut)' : ''}`);
  return `${row.kind} ${row.streams}×${row.scenario.toolCalls}: ${f.join(', ')}; ours/ref ${row.oursOverReference.toFixed(1)}×, ours/limit ${row.oursOverLimit.toFixed(2)}`;
}

export async function measureSideBySide(config: BenchConfig, pool: ServerPool, log: (line: string) => void): Promise<ComparisonRow[]> {
  const rows: ComparisonRow[] = [];
  const push = (row: ComparisonRow): void => {
    rows.push(row);
    log(describeRow(row));
  };
  for (const toolCalls of config.singleStreamToolCalls) {
    const limits = config.singleStreamTimeLimitMs;
    const timeLimitMs = toolCalls <= 1_000 ? limits.upTo1k : limits.larger;
    push(await compare('single-stream', 1, { toolCalls, intervalMs: 0, idle: false }, timeLimitMs, config.reps, pool));
  }
  for (const streams of config.concurrency) {
    push(
      await compare('throughput', streams, { toolCalls: config.concurrencyToolCalls, intervalMs: 0, idle: false }, config.concurrencyTimeLimitMs, config.reps, pool),
    );
    const paced: Scenario = { toolCalls: config.pacedToolCalls, intervalMs: config.pacedIntervalMs, idle: false };
    push(await compare('latency', streams, paced, config.pacedTimeLimitMs, config.reps, pool));
  }
  return rows;
}
