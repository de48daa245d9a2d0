/**
 * End to end over HTTP, the three servers side by side in the same run: 1, 100 and 1,000
 * concurrent streams flat out (frames/s), then paced (latency). Every figure is kept per
 * repetition; each ratio is taken between runs of the same repetition. Each paced run comes
 * right after the server's warm-up run again (untimed): otherwise a server's paced run follows
 * 20-100 s of idle here (the other targets' runs) and ~5 s in the redis section, and V8 shrinks
 * the young generation of a server that idled ~16 s or more (docs/deploying.md, thirteenth round).
 *
 * The target's row (config.pairedConcurrency: 1,000 streams flat out) runs toolstream and the
 * limit twice per repetition in an ABBA order, then the reference (lib/pairing.ts): each server's
 * figure of a repetition is the geometric mean of its two runs, so each ratio is taken between
 * runs adjacent in time, and a change of the host's regime between them does not decide it.
 * Every run is logged and kept with its user and system CPU and the machine's context switches
 * per frame. Before that row's first repetition toolstream and the limit each serve one uncounted
 * run of the row's size (logged, kept in `uncountedRuns`): the row is the first to hold 1,000
 * tasks open at once, and a server's first run of it grows its heap to that size; toolstream's
 * (1,000 open task logs) took its mark-compacts in that run and read ~20 % dearer than its other
 * five in most full runs (docs/performance.md, twenty-seventh round).
 */
import type { BenchConfig } from '../lib/config';
import { describeRunGc } from '../lib/gc-pauses';
import { TARGETS, type Target } from '../lib/ipc';
import { adjacentRatios, geometricMean, PAIRED, repetitionOrder } from '../lib/pairing';
import { describeRunCounts, runRecord, type RunRecord, type ServerPool } from '../lib/server-pool';
import type { Scenario } from '../lib/scenario';
import { ratio, spread, type Spread } from '../lib/stats';

export interface TargetFigures {
  target: Target;
  framesPerSec: Spread;
  cpuPerFrameUs: Spread;
  clientCpuPerFrameUs: Spread;
  latencyP50Ms: Spread;
  latencyP99Ms: Spread;
  /** Repetitions cut at the time limit: their rate is over the frames that arrived by then. */
  cutReps: number;
}

export interface ComparisonRow {
  kind: 'throughput' | 'latency';
  streams: number;
  scenario: Scenario;
  timeLimitMs: number;
  /** Paced runs: the frames/s the scripted runs publish if nothing holds them back. */
  offeredFramesPerSec?: number;
  figures: TargetFigures[];
  /** toolstream frames/s over the reference's and the limit's, per repetition. */
  oursOverReference: Spread;
  oursOverLimit: Spread;
  /** toolstream CPU per frame over the limit's, per repetition. */
  cpuOursOverLimit: Spread;
  /**
   * A paired row (config.pairedConcurrency): per repetition, toolstream's frames/s over the
   * limit's in each of its two adjacent pairs (oursOverLimit is their geometric mean).
   */
  adjacentOursOverLimit?: number[][];
  runs: RunRecord[];
  /** A paired row: each paired server's uncounted run of the row's size before the repetitions (rep -1). */
  uncountedRuns?: RunRecord[];
}

/** A server's runs of each repetition (two of toolstream and of the limit in a paired row). */
function byRep(target: Target, runs: RunRecord[]): RunRecord[][] {
  const out: RunRecord[][] = [];
  for (const r of runs) if (r.target === target) (out[r.rep] ??= []).push(r);
  return out.filter((reps) => reps !== undefined);
}

/** A repetition's figure of a server: the geometric mean over its runs of that repetition. */
const perRep = (records: RunRecord[], value: (r: RunRecord) => number): number => geometricMean(records.map(value));

function figures(target: Target, runs: RunRecord[]): TargetFigures {
  const mine = byRep(target, runs);
  const over = (value: (r: RunRecord) => number): Spread => spread(mine.map((r) => perRep(r, value)));
  return {
    target,
    framesPerSec: over((r) => r.framesPerSec),
    cpuPerFrameUs: over((r) => r.serverCpuPerFrameUs),
    clientCpuPerFrameUs: over((r) => r.clientCpuPerFrameUs),
    latencyP50Ms: over((r) => r.latencyP50Ms),
    latencyP99Ms: over((r) => r.latencyP99Ms),
    cutReps: mine.filter((reps) => reps.some((r) => r.cut > 0)).length,
  };
}

async function compare(
  kind: ComparisonRow['kind'],
  streams: number,
  scenario: Scenario,
  timeLimitMs: number,
  reps: number,
  pool: ServerPool,
  targets: readonly Target[] = TARGETS,
  referenceTimeLimitMs = timeLimitMs,
  paired = false,
  log?: (line: string) => void,
): Promise<ComparisonRow> {
  const runs: RunRecord[] = [];
  const overRef: number[] = [];
  const overLimit: number[] = [];
  const cpuOverLimit: number[] = [];
  const pairs: number[][] = [];
  const uncountedRuns: RunRecord[] = [];
  // A flat-out run's line names its GC (a paced row's GC is logged per row: describeGc).
  const logRun = (record: RunRecord): void => {
    const gc = kind === 'throughput' && record.gc ? `; GC ${describeRunGc(record.gc)}` : '';
    log?.(`  ${kind} ${streams}×${scenario.toolCalls}: ${describeRunCounts(record)}${gc}`);
  };
  if (paired) {
    for (const target of PAIRED.filter((t) => targets.includes(t))) {
      const record = runRecord(await pool.run(target, streams, scenario, timeLimitMs, undefined, { watchGc: true }), -1, scenario);
      uncountedRuns.push(record);
      logRun(record);
    }
  }
  for (let rep = 0; rep < reps; rep++) {
    const same: Partial<Record<Target, RunRecord[]>> = {};
    const inOrder: RunRecord[] = [];
    for (const target of repetitionOrder(targets, rep, paired)) {
      const limitMs = target === 'toolstream' || target === 'toolstream-redis' || target === 'limit' ? timeLimitMs : referenceTimeLimitMs;
      // GC is watched in the paced rows and in the paired row, whose runs sit at two levels of CPU per frame (docs/performance.md, round 24: a mark-compact inside a run is one candidate).
      const watchGc = kind === 'latency' || paired;
      const record = runRecord(await pool.run(target, streams, scenario, limitMs, undefined, { watchGc, warmFirst: kind === 'latency' }), rep, scenario);
      const mine = same[target] ?? [];
      if (paired && PAIRED.includes(target)) record.pass = mine.length;
      same[target] = [...mine, record];
      inOrder.push(record);
      runs.push(record);
      logRun(record);
    }
    if (paired) pairs.push(adjacentRatios(inOrder, (r) => r.framesPerSec));
    const { toolstream: ours, reference: ref, limit } = same;
    if (!ours || !limit) continue;
    if (ref) overRef.push(ratio(perRep(ours, (r) => r.framesPerSec), perRep(ref, (r) => r.framesPerSec)));
    // A limit run cut at the time limit understates the limit: that repetition has no ratio.
    overLimit.push(limit.some((r) => r.cut > 0) ? NaN : ratio(perRep(ours, (r) => r.framesPerSec), perRep(limit, (r) => r.framesPerSec)));
    cpuOverLimit.push(ratio(perRep(ours, (r) => r.serverCpuPerFrameUs), perRep(limit, (r) => r.serverCpuPerFrameUs)));
  }
  return {
    kind,
    streams,
    scenario,
    timeLimitMs,
    offeredFramesPerSec: scenario.intervalMs > 0 ? (streams * 2 * 1000) / scenario.intervalMs : undefined,
    figures: targets.map((t) => figures(t, runs)),
    oursOverReference: spread(overRef),
    oursOverLimit: spread(overLimit),
    cpuOursOverLimit: spread(cpuOverLimit),
    ...(paired ? { adjacentOursOverLimit: pairs, uncountedRuns } : {}),
    runs,
  };
}

/**
 * A paced row's GC, per target and repetition: scavenges, their median and max pause, and the
 * old space's free MiB when the run started (a scavenge that falls within a frame's wait
 * delays it; see docs/deploying.md, "A fresh server's scavenges").
 */
export function describeGc(row: ComparisonRow): string {
  const perTarget = row.figures.map(({ target }) => {
    const reps = row.runs.filter((r) => r.target === target).map(({ gc }) => describeRunGc(gc));
    return `${target} ${reps.join('; ')}`;
  });
  return `latency ${row.streams}×${row.scenario.toolCalls} GC per repetition (scavenges × median/max pause, other GCs, old space free at the start): ${perTarget.join(' | ')}`;
}

export function describeRow(row: ComparisonRow): string {
  const rate = (x: TargetFigures): string =>
    x.framesPerSec.reps.length > 1
      ? `${[x.framesPerSec.min, x.framesPerSec.median, x.framesPerSec.max].map(Math.round).join(' / ')} f/s (min / median / max)`
      : `${Math.round(x.framesPerSec.median)} f/s`;
  const f = row.figures.map((x) => `${x.target} ${rate(x)} p99 ${x.latencyP99Ms.median.toFixed(2)} ms${x.cutReps ? ' (cut)' : ''}`);
  const adjacent = row.adjacentOursOverLimit ? ` (adjacent pairs ${row.adjacentOursOverLimit.map((p) => p.map((r) => r.toFixed(2)).join(' & ')).join(', ')})` : '';
  return `${row.kind} ${row.streams}×${row.scenario.toolCalls}: ${f.join(', ')}; ours/limit ${row.oursOverLimit.reps.map((r) => r.toFixed(2)).join(', ')}${adjacent}`;
}

/**
 * @param withRedis also toolstream with its store in Redis, in the paced 100-stream row. The
 * reference (and Redis mode) are left out of the paced 1,000-stream row, to keep the run within
 * its time: the reference cannot open them within the time limit anyway.
 */
export async function measureSideBySide(config: BenchConfig, pool: ServerPool, withRedis: boolean, log: (line: string) => void): Promise<ComparisonRow[]> {
  const rows: ComparisonRow[] = [];
  const push = (row: ComparisonRow): void => {
    rows.push(row);
    log(describeRow(row));
  };
  for (const streams of config.concurrency) {
    const flatOut: Scenario = { toolCalls: config.concurrencyToolCalls, intervalMs: 0, idle: false };
    const paired = config.pairedConcurrency.includes(streams);
    push(await compare('throughput', streams, flatOut, config.concurrencyTimeLimitMs, config.reps, pool, TARGETS, config.concurrencyReferenceTimeLimitMs, paired, log));
  }
  for (const streams of config.pacedStreams) {
    const paced: Scenario = { toolCalls: config.pacedToolCalls, intervalMs: config.pacedIntervalMs, idle: false };
    const small = streams <= 100;
    const targets: Target[] = ['toolstream', ...(withRedis && small ? (['toolstream-redis'] as const) : []), ...(small ? (['reference'] as const) : []), 'limit'];
    push(await compare('latency', streams, paced, config.pacedTimeLimitMs, config.reps, pool, targets, config.concurrencyReferenceTimeLimitMs, false, log));
    log(describeGc(rows[rows.length - 1]));
  }
  return rows;
}
