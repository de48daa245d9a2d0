/**
 * Curves, not points: frames/s and server CPU per frame against tool calls per task, for the
 * four servers, each point one stream (tasks one after another; tasks smaller than the frame
 * budget are repeated up to it). The references clone the whole task per event, so their cost
 * per frame grows with the task; each runs only as far as it finishes in its time budget, and
 * the first point it does not finish ends its curve (reported as such, with what it delivered).
 *
 * The target's point (config.pairedCurveToolCalls, 30,000 calls: one task of 60,000 frames,
 * about a second per run) runs toolstream and the limit four times per repetition, in two ABBA
 * blocks (config.pairedCurveBlocks, lib/pairing.ts), and takes each server's figure of a
 * repetition as the geometric mean of its runs: one stream's rate switches between a fast and a
 * slow regime with the host, for every server alike, and one run of each per repetition read
 * 0.63× where the regime changed between them and 0.83-0.90× where it did not; with one block,
 * a single pair that straddled a switch still decided a repetition now and then. Every run is logged and kept with its user and system
 * CPU and the machine's context switches per frame, which say the regime it ran in.
 */
import type { BenchConfig } from '../lib/config';
import type { Target } from '../lib/ipc';
import { describeRunCounts, runRecord, type RunRecord, type ServerPool } from '../lib/server-pool';
import { FRAMES_PER_TOOL_CALL, type Scenario } from '../lib/scenario';
import { adjacentRatios, geometricMean, PAIRED, repetitionOrder } from '../lib/pairing';
import { ratio, spread, type Spread } from '../lib/stats';

export const CURVE_TARGETS: readonly Target[] = ['toolstream', 'reference', 'reference-per-call', 'limit'];
/** With a redis-server: toolstream with its store in Redis as well. */
export const CURVE_TARGETS_WITH_REDIS: readonly Target[] = ['toolstream', 'toolstream-redis', 'reference', 'reference-per-call', 'limit'];

export interface CurvePoint {
  target: Target;
  toolCalls: number;
  tasksPerRep: number;
  /** Set when a repetition hit the time budget: the curve of this server ends here. */
  notFinished?: { budgetMs: number; framesReceived: number; framesExpected: number; framesPerSec: number };
  framesPerSec?: Spread;
  cpuPerFrameUs?: Spread;
  latencyP99Ms?: Spread;
  /** Redis mode: Redis commands per frame (an upper bound on round trips). */
  redisCommandsPerFrame?: Spread;
}

export interface CurveRatios {
  toolCalls: number;
  /** toolstream's frames/s over each other server's, per repetition (when both finished). */
  oursOverLimit: Spread;
  oursOverReference: Spread;
  oursOverReferencePerCall: Spread;
  /** toolstream's CPU per frame over the limit's, per repetition. */
  cpuOursOverLimit: Spread;
  /** Redis mode's frames/s over in-memory toolstream's, per repetition (when measured). */
  redisOverInMemory: Spread;
  /**
   * A paired point (config.pairedCurveToolCalls): per repetition, toolstream's frames/s over the
   * limit's in each of its adjacent pairs, two per block (oursOverLimit is their geometric mean).
   */
  adjacentOursOverLimit?: number[][];
}

export interface CurvesResult {
  targets: Target[];
  /** The Redis-store curve's last point (config.redisCurveMaxToolCalls). */
  redisMaxToolCalls?: number;
  points: CurvePoint[];
  ratios: CurveRatios[];
  runs: RunRecord[];
}

const isReference = (t: Target): boolean => t.startsWith('reference');

export async function measureCurves(
  config: BenchConfig,
  pool: ServerPool,
  targets: readonly Target[],
  log: (line: string) => void,
): Promise<CurvesResult> {
  const points: CurvePoint[] = [];
  const ratios: CurveRatios[] = [];
  const runs: RunRecord[] = [];
  const ended = new Set<Target>();
  for (const toolCalls of config.curveToolCalls) {
    const scenario: Scenario = { toolCalls, intervalMs: 0, idle: false };
    const paired = config.pairedCurveToolCalls.includes(toolCalls);
    const pointOf = new Map<Target, CurvePoint>();
    /** Per repetition, each target's finished runs (two per block of toolstream and of the limit at a paired point). */
    const same: Array<Partial<Record<Target, RunRecord[]>>> = [];
    const pairs: number[][] = [];
    for (let rep = 0; rep < config.reps; rep++) {
      const thisRep: Partial<Record<Target, RunRecord[]>> = {};
      const inOrder: RunRecord[] = [];
      same.push(thisRep);
      for (const target of repetitionOrder(targets, rep, paired, config.pairedCurveBlocks)) {
        if (ended.has(target)) continue;
        if (target === 'toolstream-redis' && toolCalls > config.redisCurveMaxToolCalls) continue;
        const budget = isReference(target) ? config.referenceFrameBudget : config.curveFrameBudget;
        const tasks = Math.max(1, Math.round(budget / (toolCalls * FRAMES_PER_TOOL_CALL)));
        const timeLimitMs = isReference(target) ? config.referenceBudgetMs : config.curveTimeLimitMs;
        const point = pointOf.get(target) ?? { target, toolCalls, tasksPerRep: tasks };
        pointOf.set(target, point);
        const run = await pool.run(target, tasks, scenario, timeLimitMs, 1);
        const record = runRecord(run, rep, scenario);
        const mine = thisRep[target] ?? [];
        if (paired && PAIRED.includes(target)) record.pass = mine.length;
        runs.push(record);
        log(`  curve ${toolCalls} calls/task: ${describeRunCounts(record)}`);
        if (run.result.completed < tasks) {
          point.notFinished = {
            budgetMs: timeLimitMs,
            framesReceived: record.frames,
            framesExpected: record.framesExpected,
            framesPerSec: record.framesPerSec,
          };
          ended.add(target);
          log(`curve ${target} ${toolCalls} calls/task: not finished in ${timeLimitMs / 1000} s (${record.frames} of ${record.framesExpected} frames); its curve ends here`);
          continue;
        }
        thisRep[target] = [...mine, record];
        inOrder.push(record);
      }
      if (paired) pairs.push(adjacentRatios(inOrder, (r) => r.framesPerSec));
    }
    // A repetition's figure of a server: the geometric mean over its runs of that repetition.
    const perRep = (records: RunRecord[] | undefined, value: (r: RunRecord) => number): number => geometricMean((records ?? []).map(value));
    for (const [target, point] of pointOf) {
      const done = point.notFinished ? [] : same.flatMap((s) => (s[target] ? [s[target]] : []));
      if (done.length) {
        point.framesPerSec = spread(done.map((r) => perRep(r, (x) => x.framesPerSec)));
        point.cpuPerFrameUs = spread(done.map((r) => perRep(r, (x) => x.serverCpuPerFrameUs)));
        point.latencyP99Ms = spread(done.map((r) => perRep(r, (x) => x.latencyP99Ms)));
        if (target === 'toolstream-redis') point.redisCommandsPerFrame = spread(done.map((r) => perRep(r, (x) => x.redisCommandsPerFrame ?? NaN)));
      }
      points.push(point);
    }
    const over = (ours: Target, other: Target, value: (r: RunRecord) => number): Spread =>
      spread(
        same
          .filter((s) => s[ours] && s[other] && !pointOf.get(other)?.notFinished)
          .map((s) => ratio(perRep(s[ours], value), perRep(s[other], value))),
      );
    const row: CurveRatios = {
      toolCalls,
      oursOverLimit: over('toolstream', 'limit', (r) => r.framesPerSec),
      oursOverReference: over('toolstream', 'reference', (r) => r.framesPerSec),
      oursOverReferencePerCall: over('toolstream', 'reference-per-call', (r) => r.framesPerSec),
      redisOverInMemory: over('toolstream-redis', 'toolstream', (r) => r.framesPerSec),
      cpuOursOverLimit: over('toolstream', 'limit', (r) => r.serverCpuPerFrameUs),
      ...(paired ? { adjacentOursOverLimit: pairs } : {}),
    };
    ratios.push(row);
    const fps = (t: Target): string => {
      const p = pointOf.get(t);
      if (!p) return `${t} —`;
      if (p.notFinished) return `${t} not finished`;
      return `${t} ${Math.round(p.framesPerSec?.median ?? NaN)} f/s`;
    };
    const adjacent = paired ? ` (adjacent pairs ${pairs.map((p) => p.map((r) => r.toFixed(2)).join(' & ')).join(', ')})` : '';
    log(`curve ${toolCalls} calls/task: ${targets.map(fps).join(', ')}; ours/limit ${row.oursOverLimit.reps.map((r) => r.toFixed(2)).join(', ')}${adjacent}`);
  }
  return { targets: [...targets], redisMaxToolCalls: config.redisCurveMaxToolCalls, points, ratios, runs };
}
