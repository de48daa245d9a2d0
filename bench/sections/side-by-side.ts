/**
 * End to end over HTTP, the three servers side by side in the same run: 1, 100 and 1,000
 * concurrent streams flat out (frames/s), then paced (latency). Every figure is kept per
 * repetition; each ratio is taken between runs of the same repetition. Each paced run comes
 * right after the server's warm-up run again (untimed): otherwise a server's paced run follows
 * 20-100 s of idle here (the other targets' runs) and ~5 s in the redis section, and V8 shrinks
 * the young generation of a server that idled ~16 s or more (docs/deploying.md, thirteenth round).
 */
import type { BenchConfig } from '../lib/config';
import { describeRunGc } from '../lib/gc-pauses';
import { TARGETS, type Target } from '../lib/ipc';
import { runRecord, type RunRecord, type ServerPool } from '../lib/server-pool';
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
  runs: RunRecord[];
}

function figures(target: Target, runs: RunRecord[]): TargetFigures {
  const mine = runs.filter((r) => r.target === target);
  return {
    target,
    framesPerSec: spread(mine.map((r) => r.framesPerSec)),
    cpuPerFrameUs: spread(mine.map((r) => r.serverCpuPerFrameUs)),
    clientCpuPerFrameUs: spread(mine.map((r) => r.clientCpuPerFrameUs)),
    latencyP50Ms: spread(mine.map((r) => r.latencyP50Ms)),
    latencyP99Ms: spread(mine.map((r) => r.latencyP99Ms)),
    cutReps: mine.filter((r) => r.cut > 0).length,
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
): Promise<ComparisonRow> {
  const runs: RunRecord[] = [];
  const overRef: number[] = [];
  const overLimit: number[] = [];
  const cpuOverLimit: number[] = [];
  for (let rep = 0; rep < reps; rep++) {
    const same: Partial<Record<Target, RunRecord>> = {};
    for (const target of targets) {
      const limitMs = target === 'toolstream' || target === 'toolstream-redis' || target === 'limit' ? timeLimitMs : referenceTimeLimitMs;
      const record = runRecord(await pool.run(target, streams, scenario, limitMs, undefined, { watchGc: kind === 'latency', warmFirst: kind === 'latency' }), rep, scenario);
      same[target] = record;
      runs.push(record);
    }
    const { toolstream: ours, reference: ref, limit } = same;
    if (!ours || !limit) continue;
    if (ref) overRef.push(ratio(ours.framesPerSec, ref.framesPerSec));
    // A limit run cut at the time limit understates the limit: that repetition has no ratio.
    overLimit.push(limit.cut > 0 ? NaN : ratio(ours.framesPerSec, limit.framesPerSec));
    cpuOverLimit.push(ratio(ours.serverCpuPerFrameUs, limit.serverCpuPerFrameUs));
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
  return `latency ${row.streams}×${row.scenario.toolCalls} GC per repetition (scavenges × median/max pause, old space free at the start): ${perTarget.join(' | ')}`;
}

export function describeRow(row: ComparisonRow): string {
  const rate = (x: TargetFigures): string =>
    x.framesPerSec.reps.length > 1
      ? `${[x.framesPerSec.min, x.framesPerSec.median, x.framesPerSec.max].map(Math.round).join(' / ')} f/s (min / median / max)`
      : `${Math.round(x.framesPerSec.median)} f/s`;
  const f = row.figures.map((x) => `${x.target} ${rate(x)} p99 ${x.latencyP99Ms.median.toFixed(2)} ms${x.cutReps ? ' (cut)' : ''}`);
  return `${row.kind} ${row.streams}×${row.scenario.toolCalls}: ${f.join(', ')}; ours/limit ${row.oursOverLimit.reps.map((r) => r.toFixed(2)).join(', ')}`;
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
    push(await compare('throughput', streams, flatOut, config.concurrencyTimeLimitMs, config.reps, pool, TARGETS, config.concurrencyReferenceTimeLimitMs));
  }
  for (const streams of config.pacedStreams) {
    const paced: Scenario = { toolCalls: config.pacedToolCalls, intervalMs: config.pacedIntervalMs, idle: false };
    const small = streams <= 100;
    const targets: Target[] = ['toolstream', ...(withRedis && small ? (['toolstream-redis'] as const) : []), ...(small ? (['reference'] as const) : []), 'limit'];
    push(await compare('latency', streams, paced, config.pacedTimeLimitMs, config.reps, pool, targets, config.concurrencyReferenceTimeLimitMs));
    log(describeGc(rows[rows.length - 1]));
  }
  return rows;
}
